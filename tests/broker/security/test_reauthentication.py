"""KIP-368 re-authentication with ``connections.max.reauth.ms``: SaslAuthenticate tells the
client its session lifetime, a request after the session ended closes the connection, a
re-authentication on the connection (same principal) starts a new session, another principal
is refused, and librdkafka (which re-authenticates by itself) keeps producing across sessions.
Raw requests go through the broker's own kio client (``PeerConnection``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v9 import request as metadata_req
from kio.schema.sasl_authenticate.v2 import request as auth_req
from kio.schema.sasl_handshake.v1 import request as handshake_req

from broker.cluster.peer_client import PeerConnection
from broker.security.inter_broker import PeerSecurity
from tests.fixtures.broker import BrokerProcess, wait_until

REAUTH_MS = 1500
USERS = {"bob": "bob-secret", "carol": "carol-secret"}
TIMEOUT = 10.0


class ReauthBroker(BrokerProcess):
    def __init__(self, data_dir: Path) -> None:
        users = " ".join(f'user_{u}="{p}"' for u, p in USERS.items())
        config = data_dir.parent / "reauth.properties"
        config.write_text("\n".join([
            "listeners=SASL_PLAINTEXT://127.0.0.1:0",
            "sasl.enabled.mechanisms=PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config="
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};",
            f"connections.max.reauth.ms={REAUTH_MS}",
        ]) + "\n")  # fmt: skip
        super().__init__(data_dir, "--config", str(config))


@pytest.fixture
def reauth_broker(tmp_path: Path) -> Iterator[ReauthBroker]:
    proc = ReauthBroker(tmp_path / "data")
    proc.start()
    yield proc
    proc.stop()


async def _login(conn: PeerConnection, user: str) -> Any:
    shake = await conn.request(
        17, 1, handshake_req.SaslHandshakeRequest(mechanism="PLAIN"), TIMEOUT
    )
    assert shake.error_code == ErrorCode.none
    token = f"\0{user}\0{USERS[user]}".encode()
    return await conn.request(36, 2, auth_req.SaslAuthenticateRequest(auth_bytes=token), TIMEOUT)


async def _metadata(conn: PeerConnection) -> Any:
    return await conn.request(3, 9, metadata_req.MetadataRequest(
        topics=(), allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False,
    ), TIMEOUT)  # fmt: skip


def _after(deadline: float) -> None:
    """Waits for a moment in time: the session's end is what these tests are about."""
    wait_until(lambda: time.monotonic() > deadline, REAUTH_MS / 1000 + 5, "the session's end")


def test_expired_session_closes_and_reauthentication_renews(reauth_broker: ReauthBroker) -> None:
    host, port = reauth_broker.bootstrap.split(":")

    async def run() -> None:
        stale = PeerConnection(host, int(port), "stale")
        fresh = PeerConnection(host, int(port), "fresh")
        await stale.connect(TIMEOUT)
        await fresh.connect(TIMEOUT)
        try:
            started = time.monotonic()
            answer = await _login(stale, "bob")
            assert answer.error_code == ErrorCode.none
            lifetime = answer.session_lifetime.total_seconds() * 1000
            assert 0 < lifetime <= REAUTH_MS
            assert (await _login(fresh, "bob")).error_code == ErrorCode.none
            assert (await _metadata(stale)).brokers  # within the session
            # re-authenticate ``fresh`` halfway: its new session outlives the first
            await asyncio.to_thread(_after, started + REAUTH_MS / 2000)
            renewed = await _login(fresh, "bob")
            assert renewed.error_code == ErrorCode.none and renewed.session_lifetime.total_seconds()
            await asyncio.to_thread(_after, started + REAUTH_MS / 1000 + 0.1)
            assert (await _metadata(fresh)).brokers
            with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
                await _metadata(stale)
            # re-authenticating as someone else fails and closes
            other = await _login(fresh, "carol")
            assert other.error_code == ErrorCode.sasl_authentication_failed
        finally:
            stale.close()
            fresh.close()

    asyncio.run(run())
    assert "SASL session expired" in reauth_broker.log(since_start=True)


def test_librdkafka_keeps_producing_across_sessions(reauth_broker: ReauthBroker) -> None:
    settings = {
        "bootstrap.servers": reauth_broker.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "bob",
        "sasl.password": "bob-secret",
    }
    producer = Producer({**settings, "linger.ms": 0})
    delivered: list[object] = []
    end = time.monotonic() + 3 * REAUTH_MS / 1000
    while time.monotonic() < end:
        producer.produce("reauth", b"x", on_delivery=lambda err, _m: delivered.append(err))
        producer.poll(0.1)
    assert producer.flush(TIMEOUT) == 0
    assert delivered and all(err is None for err in delivered)
    log = reauth_broker.log(since_start=True)
    assert "SASL session expired" not in log, "librdkafka did not re-authenticate in time"


def test_the_brokers_peer_client_reauthenticates(reauth_broker: ReauthBroker) -> None:
    """Replica fetchers and marker senders log in again before their session ends."""
    host, port = reauth_broker.bootstrap.split(":")

    async def run() -> None:
        security = PeerSecurity(None, "PLAIN", "bob", USERS["bob"])
        conn = PeerConnection(host, int(port), "peer", security)
        await conn.connect(TIMEOUT)
        try:
            started = time.monotonic()
            assert (await _metadata(conn)).brokers
            await asyncio.to_thread(_after, started + REAUTH_MS / 1000 + 0.2)
            assert (await _metadata(conn)).brokers
        finally:
            conn.close()

    asyncio.run(run())
    assert "SASL session expired" not in reauth_broker.log(since_start=True)
