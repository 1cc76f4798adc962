"""A 3-broker cluster whose brokers replicate over a SASL_SSL listener (PLAIN login as
``User:broker``) with an authorizer that allows nobody else anything: the followers' fetches
authenticate and pass the CLUSTER_ACTION check, records written with acks=all survive the
leader's kill -9, and a broker without the inter-broker login settings refuses to start."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.broker.cluster.cluster import Cluster
from tests.fixtures.broker import wait_until
from tests.fixtures.tls import TlsFiles

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="broker" password="broker-secret" '
    'user_broker="broker-secret" user_admin="admin-secret" user_eve="eve-secret";'
)


def _options(tls: TlsFiles, mechanism: bool = True) -> list[str]:
    settings = [
        "listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        "inter.broker.listener.name=SASL_SSL",
        "sasl.enabled.mechanisms=PLAIN",
        "listener.name.sasl_ssl.ssl.keystore.type=PEM",
        f"listener.name.sasl_ssl.ssl.keystore.location={tls.server_keystore}",
        f"listener.name.sasl_ssl.ssl.truststore.location={tls.ca}",
        f"listener.name.sasl_ssl.plain.sasl.jaas.config={JAAS}",
        "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
        "super.users=User:broker;User:admin",
    ]
    if mechanism:
        settings.append("sasl.mechanism.inter.broker.protocol=PLAIN")
    return [arg for item in settings for arg in ("-o", item)]


def _client(cluster: Cluster, tls: TlsFiles, user: str, **extra: object) -> dict[str, object]:
    ports = []
    for b in cluster.brokers.values():
        if b.running:
            match = re.search(r"SASL_SSL://127\.0\.0\.1:(\d+)", b.log(since_start=True))
            assert match
            ports.append(match.group(1))
    return {
        "bootstrap.servers": ",".join(f"127.0.0.1:{p}" for p in ports),
        "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
        "sasl.username": user, "sasl.password": f"{user}-secret", "ssl.ca.location": str(tls.ca),
        **extra,
    }  # fmt: skip


def _produce(settings: dict[str, object], topic: str, values: range) -> None:
    producer = Producer({**settings, "acks": "all", "enable.idempotence": True,
                         "message.timeout.ms": 60_000})  # fmt: skip
    failed: list[object] = []
    for i in values:
        producer.produce(topic, str(i).encode(), on_delivery=lambda e, _m: e and failed.append(e))
    assert producer.flush(90) == 0 and failed == []


def test_replicates_and_fails_over_over_sasl_ssl(
    tmp_path: Path, zk_chroot: str, tls_files: TlsFiles
) -> None:
    cluster = Cluster(tmp_path, zk_chroot, 3, *_options(tls_files))
    try:
        cluster.start()
        admin = AdminClient(_client(cluster, tls_files, "admin"))
        topic = "replicated-over-tls"
        admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(30)
        # the followers can only join the ISR by fetching as User:broker over SASL_SSL
        cluster.wait(lambda: len(cluster.isr(topic, 0)) == 3, "full ISR over SASL_SSL", 30)
        _produce(_client(cluster, tls_files, "admin"), topic, range(500))

        # an authenticated user without ACLs is refused: the authorizer is on
        eve = Producer({**_client(cluster, tls_files, "eve"), "message.timeout.ms": 5000})
        errors: list[object] = []
        eve.produce(topic, b"x", on_delivery=lambda e, _m: errors.append(e))
        eve.flush(10)
        assert errors and errors[0] is not None and "AUTHORIZATION" in str(errors[0]).upper()

        leader = cluster.leader(topic, 0)
        cluster.brokers[leader].kill()
        cluster.wait(lambda: cluster.leader(topic, 0) not in (leader, -1), "a new leader", 30)
        _produce(_client(cluster, tls_files, "admin"), topic, range(500, 1000))

        consumer = Consumer({**_client(cluster, tls_files, "admin"), "group.id": "check",
                             "enable.auto.commit": False})  # fmt: skip
        try:
            consumer.assign([TopicPartition(topic, 0, 0)])
            seen: list[int] = []

            def read_all() -> bool:
                for msg in consumer.consume(1000, 0.5):
                    assert not msg.error(), msg.error()
                    seen.append(int(msg.value()))
                return len(seen) >= 1000

            wait_until(read_all, 60, "all 1000 records after the failover")
        finally:
            consumer.close()
        assert seen == list(range(1000))
    finally:
        cluster.stop()


def test_sasl_inter_broker_listener_needs_the_brokers_login(
    tmp_path: Path, tls_files: TlsFiles
) -> None:
    options = _options(tls_files, mechanism=False)
    done = subprocess.run(
        [sys.executable, "-m", "sluice", "broker", "--data-dir", str(tmp_path / "d"),
         "--broker-id", "1", "--zookeeper", "127.0.0.1:1/none", *options],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0
    assert "sasl.mechanism.inter.broker.protocol" in done.stderr + done.stdout
