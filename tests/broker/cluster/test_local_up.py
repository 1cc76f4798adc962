"""``sluice up --brokers 3``: ZooKeeper, three brokers and the hub from one command, with the
default security of ``sluice up`` (docs/security.md, "The default `sluice up` broker"):
anonymous clients on the users' listeners, the hub (and the brokers between themselves) as
``sluice-hub`` on the ``HUB`` listeners, the hub's topics and the cluster's ACLs out of anonymous
reach. One start serves every test of the module but the last; the tests only read and add."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import create_connector, free_port

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
_HUB_LISTENER = re.compile(r"broker listening .*HUB://([\d.]+:\d+)")


@dataclass
class Up:
    """A running ``sluice up --brokers 3`` and what its log and data directory tell."""

    proc: subprocess.Popen[bytes]
    log: Path
    data_dir: Path
    rest_port: int

    def text(self) -> str:
        return self.log.read_text()

    @property
    def bootstrap(self) -> str:
        """The users' (PLAINTEXT) listeners of the three brokers."""
        found = re.search(r"local cluster up brokers=(\S+)", self.text())
        assert found, self.text()[-4000:]
        return found.group(1)

    @property
    def password(self) -> str:
        return (self.data_dir / "hub-broker.password").read_text().strip()

    def hub_client_config(self) -> dict[str, str]:
        """librdkafka settings that log in as the hub on the brokers' ``HUB`` listeners."""
        hub_listeners = _HUB_LISTENER.findall(self.text())
        assert len(hub_listeners) == 3, self.text()[-4000:]
        return {
            "bootstrap.servers": ",".join(hub_listeners), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "sluice-hub",
            "sasl.password": self.password,
        }  # fmt: skip


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    root = tmp_path_factory.mktemp("up")
    log, rest = root / "up.log", free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "up", "--data-dir", str(root / "data"),
             "--brokers", "3", "--broker-port", "0", "--rest-port", str(rest),
             "--zookeeper-port", str(free_port()), "--schema-registry-port", "0"],
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    running = Up(proc, log, root / "data", rest)
    try:
        wait_until(lambda: "hub listening" in log.read_text() or proc.poll() is not None, 120,
                   "hub listening")  # fmt: skip
        assert proc.poll() is None, log.read_text()[-4000:]
        yield running
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(90)
    assert code == 0, log.read_text()[-4000:]


def _delivery_errors(bootstrap: str, topic: str, values: list[bytes], **extra: Any) -> list[Any]:
    """Produces ``values``; the delivery errors (None for each success)."""
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 15000, **extra})
    results: list[Any] = []
    for value in values:
        producer.produce(topic, value, on_delivery=lambda err, _msg: results.append(err))
    producer.flush(20)
    return results


def _consume(config: dict[str, Any], topic: str, count: int) -> list[bytes]:
    consumer = Consumer({**config, "group.id": f"g-{uuid.uuid4().hex[:6]}",
                         "auto.offset.reset": "earliest"})  # fmt: skip
    consumer.subscribe([topic])
    got: list[bytes] = []

    def enough() -> bool:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
        return len(got) >= count

    try:
        wait_until(enough, 60, f"{count} records of {topic}")
    finally:
        consumer.close()
    return got


def test_three_brokers_and_the_hub_on_their_hub_listeners(up: Up) -> None:
    admin = AdminClient({"bootstrap.servers": up.bootstrap})
    nodes = admin.describe_cluster(request_timeout=20).result(30).nodes
    assert sorted(n.id for n in nodes) == [1, 2, 3]
    # the brokers registered their HUB listener as the inter-broker one
    registered = re.findall(
        r"broker listening .*advertised=(\S+) listeners=.*HUB://(\S+) ", up.text()
    )
    assert len(registered) == 3 and all(adv == hub for adv, hub in registered), registered
    # the internal topics are the hub's: it sees them (RF 3), an anonymous client does not
    topics = AdminClient(up.hub_client_config()).list_topics(timeout=20).topics
    configs = [t for t in topics if "config" in t]
    assert configs and all(
        len(p.replicas) == 3 for t in configs for p in topics[t].partitions.values()
    )
    assert "sluice-connect-configs" not in admin.list_topics(timeout=20).topics

    # a connector created through REST runs; what it writes anyone may read
    files = up.data_dir.parent / "files"
    files.mkdir(exist_ok=True)
    source, topic = files / "in.txt", f"lines-{uuid.uuid4().hex[:6]}"
    source.write_text("".join(f"line-{i}\n" for i in range(10)))
    token = (up.data_dir / "hub.token").read_text().strip()
    config = {"connector.class": SOURCE, "file": str(source), "topic": topic}
    create_connector(up.rest_port, token, "src", config)
    got = _consume({"bootstrap.servers": up.bootstrap}, topic, 10)
    assert [f'"payload":"line-{i}"'.encode() in v for i, v in enumerate(got)] == [True] * 10


def test_anonymous_clients_use_a_replicated_topic(up: Up) -> None:
    admin = AdminClient({"bootstrap.servers": up.bootstrap})
    topic = f"orders-{uuid.uuid4().hex[:6]}"
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(20)

    def in_sync() -> bool:
        meta = admin.list_topics(topic, timeout=10).topics[topic]
        return bool(meta.partitions) and len(meta.partitions[0].isrs) == 3

    wait_until(in_sync, 30, f"{topic} to have 3 in-sync replicas")
    # acks=all: acknowledged once both followers fetched the records (as sluice-hub)
    extra = {"acks": "all", "enable.idempotence": True}  # IDEMPOTENT_WRITE is everyone's
    assert _delivery_errors(up.bootstrap, topic, [b"a", b"b"], **extra) == [None, None]
    assert in_sync()
    assert _consume({"bootstrap.servers": up.bootstrap}, topic, 2) == [b"a", b"b"]


def test_anonymous_clients_cannot_reach_the_hubs_topics_nor_grant_themselves(up: Up) -> None:
    # four records in the config topic would create a connector
    errors = _delivery_errors(up.bootstrap, "sluice-connect-configs", [b"x"])
    assert errors[0] is not None
    assert errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    acl = AclBinding(ResourceType.TOPIC, "sluice-connect-configs", ResourcePatternType.LITERAL,
                     "User:ANONYMOUS", "*", AclOperation.ALL, AclPermissionType.ALLOW)  # fmt: skip
    admin = AdminClient({"bootstrap.servers": up.bootstrap})
    future = admin.create_acls([acl], request_timeout=15)[acl]
    with pytest.raises(KafkaException) as refused:
        future.result(20)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED

    # everyone may only what ordinary clients need of the cluster: no ALTER, no CLUSTER_ACTION
    on_cluster = AclBindingFilter(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.ANY,
                                  None, None, AclOperation.ANY, AclPermissionType.ANY)  # fmt: skip
    hub_admin = AdminClient(up.hub_client_config())
    found = hub_admin.describe_acls(on_cluster, request_timeout=15).result(20)
    assert sorted((b.principal, b.operation.name, b.permission_type.name) for b in found) == [
        ("User:*", op, "ALLOW")
        for op in sorted(("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "IDEMPOTENT_WRITE"))
    ]


def test_the_hubs_password_stays_in_its_file(up: Up) -> None:
    path = up.data_dir / "hub-broker.password"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    password = up.password
    assert password and password not in up.text()
    assert password not in (up.data_dir / "zookeeper" / "zookeeper.log").read_text()


def test_zookeeper_is_prepared_once(zk_chroot: str, tmp_path: Path) -> None:
    """A restart finds the credential and the ACLs in ZooKeeper and writes neither again."""
    from kazoo.client import KazooClient

    from sluice import hub_login

    hosts, chroot = zk_chroot.split("/", 1)
    bare = KazooClient(hosts=hosts)
    bare.start(timeout=30)
    bare.ensure_path("/" + chroot)
    bare.stop()
    zk = KazooClient(hosts=zk_chroot)
    zk.start(timeout=30)
    try:
        login = hub_login.cluster_login(tmp_path)
        acls = [*hub_login.cluster_acls(), *hub_login.reserved_acls(["a-configs"], "grp")]
        hub_login.prepare_zookeeper(zk, login, acls)
        _, user = zk.get("/config/users/sluice-hub")
        changes = zk.get_children("/kafka-acl-changes")
        hub_login.prepare_zookeeper(zk, hub_login.cluster_login(tmp_path), acls)
        assert zk.get("/config/users/sluice-hub")[1].version == user.version
        assert zk.get_children("/kafka-acl-changes") == changes
        assert login.password.encode() not in zk.get("/config/users/sluice-hub")[0]
    finally:
        zk.stop()
        zk.close()
