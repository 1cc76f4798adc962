"""SASL on the wire, byte by byte: what an unauthenticated client may do, Kafka's legacy
framing after a v0 handshake, and that a failed login closes the connection after its error.
Against the SASL_PLAINTEXT listener (PLAIN) of the secure broker."""

from __future__ import annotations

import struct

from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.sasl_authenticate.v2.request import SaslAuthenticateRequest
from kio.schema.sasl_handshake.v0.request import SaslHandshakeRequest as HandshakeV0
from kio.schema.sasl_handshake.v1.request import SaslHandshakeRequest

from tests.broker.protocol.wire import WireClient, _recv_exact
from tests.fixtures.broker import api_versions_ok
from tests.fixtures.secure_broker import PLAIN_PASSWORD, PLAIN_USER, SecureBroker

GOOD = f"\0{PLAIN_USER}\0{PLAIN_PASSWORD}".encode()


def _metadata() -> MetadataRequest:
    return MetadataRequest(
        topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
    )


def _client(broker: SecureBroker) -> WireClient:
    return WireClient("127.0.0.1", broker.port_of("SASL_PLAINTEXT"))


def test_handshake_then_authenticate_then_served(secure_broker: SecureBroker) -> None:
    with _client(secure_broker) as client:
        handshake = client.call(SaslHandshakeRequest(mechanism="PLAIN"))
        assert handshake.error_code == ErrorCode.none and "PLAIN" in handshake.mechanisms
        auth = client.call(SaslAuthenticateRequest(auth_bytes=GOOD))
        assert auth.error_code == ErrorCode.none
        port = secure_broker.port_of("SASL_PLAINTEXT")
        assert [b.port for b in client.call(_metadata()).brokers] == [port]


def test_requests_before_authentication_close_the_connection(secure_broker: SecureBroker) -> None:
    with _client(secure_broker) as client:
        client.send(_metadata())
        assert client.is_closed_by_peer()
    with _client(secure_broker) as client:  # an unknown mechanism: the list, then closed
        handshake = client.call(SaslHandshakeRequest(mechanism="GSSAPI"))
        assert handshake.error_code == ErrorCode.unsupported_sasl_mechanism
        assert "SCRAM-SHA-512" not in handshake.mechanisms  # this listener: PLAIN only
        assert client.is_closed_by_peer()


def test_large_frames_before_authentication_are_refused(secure_broker: SecureBroker) -> None:
    with _client(secure_broker) as client:
        client.send_raw(struct.pack(">i", 600 * 1024))  # > sasl.server.max.receive.size
        assert client.is_closed_by_peer()
    assert api_versions_ok("127.0.0.1", secure_broker.port)


def test_failed_authentication_answers_then_closes(secure_broker: SecureBroker) -> None:
    with _client(secure_broker) as client:
        client.call(SaslHandshakeRequest(mechanism="PLAIN"))
        auth = client.call(SaslAuthenticateRequest(auth_bytes=f"\0{PLAIN_USER}\0no".encode()))
        assert auth.error_code == ErrorCode.sasl_authentication_failed
        assert auth.error_message == "Authentication failed: Invalid username or password"
        assert client.is_closed_by_peer()


def test_v0_handshake_takes_a_bare_token(secure_broker: SecureBroker) -> None:
    with _client(secure_broker) as client:
        assert client.call(HandshakeV0(mechanism="PLAIN")).error_code == ErrorCode.none
        client.send_raw(struct.pack(">i", len(GOOD)) + GOOD)
        (size,) = struct.unpack(">i", _recv_exact(client.sock, 4))
        assert size == 0  # PLAIN's empty server reply, as a bare frame
        assert client.call(_metadata()).brokers
    with _client(secure_broker) as client:
        client.call(HandshakeV0(mechanism="PLAIN"))
        bad = f"\0{PLAIN_USER}\0no".encode()
        client.send_raw(struct.pack(">i", len(bad)) + bad)
        assert client.is_closed_by_peer()  # no error frame exists in this framing
