"""``sluice up --broker-config``: an embedded broker with a SASL listener and an authorizer
that allows what no ACL names (``allow.everyone.if.no.acl.found=true``). The hub, logged in
as ``User:hub``, reserves its internal topics to itself at start: another authenticated user
is refused on the config topic (TOPIC_AUTHORIZATION_FAILED) but may still use other topics,
and the hub's connectors run."""

from __future__ import annotations

import uuid
from pathlib import Path

from confluent_kafka import KafkaError, Producer

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import HubProcess

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'user_hub="hub-secret" user_eve="eve-secret";'
)


def _broker_config(path: Path) -> Path:
    path.write_text("\n".join([
        "listeners=SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms=PLAIN",
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={JAAS}",
        "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found=true",
    ]) + "\n")  # fmt: skip
    return path


def _sasl(user: str) -> dict[str, str]:
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
            "sasl.username": user, "sasl.password": f"{user}-secret"}  # fmt: skip


def _produce_error(bootstrap: str, topic: str) -> object:
    producer = Producer({"bootstrap.servers": bootstrap, **_sasl("eve"),
                         "message.timeout.ms": 10_000})  # fmt: skip
    outcome: list[object] = []
    producer.produce(topic, b"{}", key=b"connector-evil",
                     on_delivery=lambda err, _msg: outcome.append(err))  # fmt: skip
    producer.flush(15)
    assert outcome, "no delivery report"
    return outcome[0]


def test_only_the_hub_writes_its_internal_topics(tmp_path: Path) -> None:
    hub = HubProcess(tmp_path / "data", _sasl("hub"))
    hub.extra_args = ("--broker-config", str(_broker_config(tmp_path / "server.properties")))
    hub.start()
    try:
        assert "internal topics reserved to the hub" in hub.log(since_start=True)
        err = _produce_error(hub.bootstrap, "sluice-connect-configs")
        assert isinstance(err, KafkaError)
        assert err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        assert _produce_error(hub.bootstrap, f"eve-{uuid.uuid4().hex[:6]}") is None

        source, out = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("".join(f"line {i}\n" for i in range(5)))
        topic = f"acl-{uuid.uuid4().hex[:6]}"
        for name, config in (
            ("src", {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}),
            ("sink", {"connector.class": "FileStreamSink", "file": str(out), "topics": topic}),
        ):
            status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
            assert status == 201, body
        wait_until(lambda: out.exists() and out.read_text().count("\n") >= 5, 60,
                   "the connectors to copy the file through the broker")  # fmt: skip
    finally:
        hub.stop()


def test_without_an_authorizer_nothing_is_created_or_warned(tmp_path: Path) -> None:
    """``--broker-config`` replaces the default (which has an authorizer) entirely."""
    config = tmp_path / "server.properties"
    config.write_text("listeners=PLAINTEXT://127.0.0.1:0\n")
    hub = HubProcess(tmp_path / "data")
    hub.extra_args = ("--broker-config", str(config))
    hub.start()
    try:
        text = hub.log(since_start=True)
    finally:
        hub.stop()
    assert "internal topics reserved" not in text
    assert "cannot be reserved" not in text
