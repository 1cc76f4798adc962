"""``sluice up`` by default: anonymous Kafka clients work as before, but may not write the hub's
internal topics nor change ACLs, while the hub (its own SCRAM login) still runs connectors
(issues 16 and 21; docs/security.md)."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import HubProcess

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def _delivery_errors(bootstrap: str, topic: str, values: list[bytes], **extra: object) -> list:
    """Produces ``values``; the delivery errors (None for each success)."""
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 15000, **extra})
    results: list = []
    for value in values:
        producer.produce(topic, value, on_delivery=lambda err, _msg: results.append(err))
    producer.flush(20)
    return results


def test_anonymous_clients_work_but_cannot_reach_the_hubs_topics(
    hub: HubProcess, tmp_path: Path
) -> None:
    password_file = hub.data_dir / "hub-broker.password"
    assert stat.S_IMODE(os.stat(password_file).st_mode) == 0o600
    password = password_file.read_text().strip()
    assert password and password not in hub.log()

    # a connector created through REST runs (the hub's clients log in over its listener)
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(100)))
    for name, config in (
        ("src", {"connector.class": SOURCE, "file": str(source), "topic": "lines"}),
        ("snk", {"connector.class": SINK, "file": str(sink), "topics": "lines"}),
    ):
        status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
        assert status == 201, body
    wait_until(lambda: sink.exists() and len(sink.read_text().splitlines()) >= 100, 60, "100 lines")
    assert "internal topics reserved to the hub" in hub.log()

    # the console offers users their listener, not the hub's
    status, defaults = hub.request("GET", "/console/api/pipelines/defaults")
    assert status == 200 and defaults["bootstrap_servers"] == hub.bootstrap, defaults

    bootstrap = hub.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = f"orders-{uuid.uuid4().hex[:6]}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(20)

    # idempotent producer: IDEMPOTENT_WRITE on the cluster is granted to everyone
    errors = _delivery_errors(bootstrap, topic, [b"a", b"b"], **{"enable.idempotence": True})
    assert errors == [None, None]

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "anon-group",
        "auto.offset.reset": "earliest",
    })  # fmt: skip
    consumer.subscribe([topic])
    got: list[bytes] = []

    def two() -> bool:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
        return len(got) >= 2

    try:
        wait_until(two, 30, "the anonymous group consumer's records")
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert got == [b"a", b"b"]

    # the config topic is the hub's: four records there would create a connector
    errors = _delivery_errors(bootstrap, "sluice-connect-configs", [b"x"])
    assert errors[0] is not None
    assert errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    # and nobody may grant themselves the topics back
    acl = AclBinding(ResourceType.TOPIC, "sluice-connect-configs", ResourcePatternType.LITERAL,
                     "User:ANONYMOUS", "*", AclOperation.ALL, AclPermissionType.ALLOW)  # fmt: skip
    future = admin.create_acls([acl], request_timeout=15)[acl]
    try:
        future.result(20)
        raise AssertionError("anonymous CreateAcls was accepted")
    except KafkaException as exc:
        assert exc.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED

    del admin  # its librdkafka threads would log the restart's refused connections
    # the connector keeps running after a restart (ACLs and the credential are reused)
    assert hub.stop() == 0
    with open(source, "a") as f:
        f.write("".join(f"line-{i}\n" for i in range(100, 150)))
    hub.start()
    assert (hub.data_dir / "hub-broker.password").read_text().strip() == password
    wait_until(lambda: len(sink.read_text().splitlines()) >= 150, 60, "150 lines after restart")


def test_broker_on_a_thread_has_the_same_default(tmp_path: Path) -> None:
    """``--broker-thread``: the hub finds its listener's bound port on the in-process broker."""
    hub = HubProcess(tmp_path / "data")
    hub.extra_args = ("--broker-thread",)
    hub.start()
    try:
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("".join(f"line-{i}\n" for i in range(10)))
        for name, config in (
            ("src", {"connector.class": SOURCE, "file": str(source), "topic": "lines"}),
            ("snk", {"connector.class": SINK, "file": str(sink), "topics": "lines"}),
        ):
            status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
            assert status == 201, body
        wait_until(
            lambda: sink.exists() and len(sink.read_text().splitlines()) >= 10, 60, "10 lines"
        )
        errors = _delivery_errors(hub.bootstrap, "sluice-connect-configs", [b"x"])
        assert errors[0] is not None
        assert errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        hub.stop()


def test_the_credential_and_acls_are_prepared_once(tmp_path: Path) -> None:
    """A second start keeps the password and the stored credential, and adds no ACL twice."""
    from broker.security.acl_store import FileAclStore
    from broker.security.scram import FileScramStore
    from sluice import hub_login

    data = tmp_path / "data"
    first = hub_login.prepare(data)
    hub_login.reserve_topics(data, ["a-configs"], "grp")
    stored = FileScramStore(data).get("sluice-hub", "SCRAM-SHA-512")
    acls = FileAclStore(data).load()
    (data / "hub-broker.password").chmod(0o644)
    second = hub_login.prepare(data)
    hub_login.reserve_topics(data, ["a-configs"], "grp")
    assert second == first and first.password not in repr(first)
    assert FileScramStore(data).get("sluice-hub", "SCRAM-SHA-512") == stored
    assert FileAclStore(data).load() == acls and len(acls) == 4 + 3
    assert stat.S_IMODE(os.stat(data / "hub-broker.password").st_mode) == 0o600
