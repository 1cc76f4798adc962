"""kafka-python and aiokafka over SASL_SSL (SCRAM-SHA-512) and SSL with client certificates:
create a topic, produce, consume in a group; a wrong password and an expired certificate fail
on the client while the broker keeps serving."""

from __future__ import annotations

import asyncio
import ssl
import uuid
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic as AioNewTopic
from aiokafka.errors import KafkaConnectionError
from aiokafka.helpers import create_ssl_context
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError

from tests.fixtures.broker import api_versions_ok
from tests.fixtures.secure_broker import SCRAM_PASSWORD, SCRAM_USER, SecureBroker

TIMEOUT = 30


def _kafka_python(broker: SecureBroker, kind: str, password: str = SCRAM_PASSWORD,
                  expired: bool = False) -> dict[str, Any]:  # fmt: skip
    tls = broker.tls
    if kind == "scram":
        return {"bootstrap_servers": broker.bootstrap_of("SASL_SSL"),
                "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                "sasl_plain_username": SCRAM_USER, "sasl_plain_password": password,
                "ssl_cafile": str(tls.ca)}  # fmt: skip
    cert, key = (tls.expired_cert, tls.expired_key) if expired else (
        tls.client_cert, tls.client_key)  # fmt: skip
    return {
        "bootstrap_servers": broker.bootstrap_of("SSL"), "security_protocol": "SSL",
        "ssl_cafile": str(tls.ca), "ssl_certfile": str(cert), "ssl_keyfile": str(key),
    }  # fmt: skip


@pytest.mark.parametrize("kind", ["scram", "cert"])
def test_kafka_python_roundtrip(secure_broker: SecureBroker, topic_name: str, kind: str) -> None:
    settings = _kafka_python(secure_broker, kind)
    admin = KafkaAdminClient(**settings)
    try:
        admin.create_topics([NewTopic(topic_name, 2, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(**settings)
    for i in range(10):
        producer.send(topic_name, f"v{i}".encode())
    producer.flush(TIMEOUT)
    producer.close()
    consumer = KafkaConsumer(topic_name, group_id=f"g-{uuid.uuid4().hex[:6]}",
                             auto_offset_reset="earliest", consumer_timeout_ms=15000,
                             **settings)  # fmt: skip
    seen = set()
    try:
        for message in consumer:
            seen.add(message.value)
            if len(seen) == 10:
                break
        consumer.commit()
    finally:
        consumer.close()
    assert seen == {f"v{i}".encode() for i in range(10)}


@pytest.mark.parametrize("case", ["wrong password", "expired certificate"])
def test_kafka_python_refused(secure_broker: SecureBroker, case: str) -> None:
    if case == "wrong password":
        settings = _kafka_python(secure_broker, "scram", password="wrong")
    else:
        settings = _kafka_python(secure_broker, "cert", expired=True)
    with pytest.raises((KafkaError, ssl.SSLError, OSError)):
        KafkaAdminClient(**settings, bootstrap_timeout_ms=3000).close()
    assert api_versions_ok("127.0.0.1", secure_broker.port)


def _aiokafka(broker: SecureBroker, kind: str, password: str = SCRAM_PASSWORD) -> dict[str, Any]:
    tls = broker.tls
    if kind == "scram":
        return {"bootstrap_servers": broker.bootstrap_of("SASL_SSL"),
                "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                "sasl_plain_username": SCRAM_USER, "sasl_plain_password": password,
                "ssl_context": create_ssl_context(cafile=str(tls.ca))}  # fmt: skip
    return {"bootstrap_servers": broker.bootstrap_of("SSL"), "security_protocol": "SSL",
            "ssl_context": create_ssl_context(cafile=str(tls.ca), certfile=str(tls.client_cert),
                                              keyfile=str(tls.client_key))}  # fmt: skip


@pytest.mark.parametrize("kind", ["scram", "cert"])
def test_aiokafka_roundtrip(secure_broker: SecureBroker, topic_name: str, kind: str) -> None:
    async def run() -> set[bytes]:
        admin = AIOKafkaAdminClient(**_aiokafka(secure_broker, kind))
        await admin.start()
        try:
            await admin.create_topics([AioNewTopic(topic_name, 2, 1)])
        finally:
            await admin.close()
        producer = AIOKafkaProducer(**_aiokafka(secure_broker, kind))
        await producer.start()
        try:
            for i in range(10):
                await producer.send_and_wait(topic_name, f"v{i}".encode())
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic_name, group_id=f"g-{uuid.uuid4().hex[:6]}",
                                    auto_offset_reset="earliest",
                                    **_aiokafka(secure_broker, kind))  # fmt: skip
        await consumer.start()
        seen: set[bytes] = set()
        try:

            async def drain() -> None:
                async for message in consumer:
                    seen.add(message.value)
                    if len(seen) == 10:
                        return

            await asyncio.wait_for(drain(), TIMEOUT)
            await consumer.commit()
        finally:
            await consumer.stop()
        return seen

    assert asyncio.run(run()) == {f"v{i}".encode() for i in range(10)}


def test_aiokafka_wrong_password_is_refused(
    secure_broker: SecureBroker, caplog: pytest.LogCaptureFixture
) -> None:
    async def run() -> None:
        producer = AIOKafkaProducer(**_aiokafka(secure_broker, "scram", password="wrong"),
                                    request_timeout_ms=5000)  # fmt: skip
        try:
            await producer.start()
        finally:
            await producer.stop()

    with pytest.raises(KafkaConnectionError):
        asyncio.run(run())
    assert "SaslAuthenticationFailed" in caplog.text  # aiokafka logs the broker's error 58
    assert api_versions_ok("127.0.0.1", secure_broker.port)
