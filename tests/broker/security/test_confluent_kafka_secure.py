"""confluent-kafka (librdkafka) against SASL_SSL (SCRAM-SHA-512, PLAIN), SSL with client
certificates and SASL_PLAINTEXT: create a topic, produce, consume in a group; and every way of
failing (wrong password, unknown user, expired or untrusted certificate, plaintext to the TLS
port) fails on the client while the broker keeps serving."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.broker import api_versions_ok
from tests.fixtures.secure_broker import SecureBroker


def _roundtrip(settings: dict[str, str], topic: str) -> None:
    admin = AdminClient(settings)
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(
        timeout=15
    )
    producer = Producer(settings)
    errors: list[object] = []
    for i in range(10):
        producer.produce(topic, f"v{i}".encode(), key=f"k{i}".encode(),
                         on_delivery=lambda err, _m: errors.append(err))  # fmt: skip
    assert producer.flush(15) == 0
    assert errors == [None] * 10
    consumer = Consumer({**settings, "group.id": f"g-{uuid.uuid4().hex[:6]}",
                         "auto.offset.reset": "earliest"})  # fmt: skip
    consumer.subscribe([topic])
    seen: set[bytes] = set()
    try:
        for _ in range(60):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                seen.add(msg.value())
            if len(seen) == 10:
                break
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert seen == {f"v{i}".encode() for i in range(10)}


@pytest.mark.parametrize("kind", ["scram", "plain", "cert", "sasl_plaintext"])
def test_produce_consume_over_each_listener(
    secure_broker: SecureBroker, topic_name: str, kind: str
) -> None:
    _roundtrip(secure_broker.client_settings(kind), topic_name)


def _metadata_fails(settings: dict[str, str]) -> str:
    admin = AdminClient({**settings, "socket.timeout.ms": "3000"})
    with pytest.raises(KafkaException) as info:
        admin.list_topics(timeout=4)
    return str(info.value)


@pytest.mark.parametrize(
    ("kind", "changes"),
    [
        ("scram", {"sasl.password": "wrong"}),
        ("scram", {"sasl.username": "nobody"}),
        ("plain", {"sasl.password": "wrong"}),
        ("scram", {"sasl.mechanism": "SCRAM-SHA-256", "sasl.password": "wrong"}),
    ],
)
def test_bad_credentials_fail_cleanly(
    secure_broker: SecureBroker, kind: str, changes: dict[str, str]
) -> None:
    _metadata_fails(secure_broker.client_settings(kind, **changes))
    assert api_versions_ok("127.0.0.1", secure_broker.port)


@pytest.mark.parametrize("which", ["expired", "untrusted"])
def test_bad_client_certificates_are_refused(secure_broker: SecureBroker, which: str) -> None:
    tls = secure_broker.tls
    cert, key = (tls.expired_cert, tls.expired_key) if which == "expired" else (
        tls.untrusted_cert, tls.untrusted_key)  # fmt: skip
    settings = secure_broker.client_settings(
        "cert", **{"ssl.certificate.location": str(cert), "ssl.key.location": str(key)}
    )
    _metadata_fails(settings)
    assert api_versions_ok("127.0.0.1", secure_broker.port)


def test_plaintext_client_on_tls_port_fails(secure_broker: SecureBroker) -> None:
    _metadata_fails({"bootstrap.servers": secure_broker.bootstrap_of("SASL_SSL")})
    assert not api_versions_ok("127.0.0.1", secure_broker.port_of("SSL"), timeout=2)
    assert api_versions_ok("127.0.0.1", secure_broker.port)


def test_metadata_advertises_the_listener_used(secure_broker: SecureBroker) -> None:
    settings = secure_broker.client_settings("scram")
    brokers = AdminClient(settings).list_topics(timeout=10).brokers
    assert [(b.host, b.port) for b in brokers.values()] == [
        ("127.0.0.1", secure_broker.port_of("SASL_SSL"))
    ]
