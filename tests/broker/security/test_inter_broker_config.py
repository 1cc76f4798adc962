"""The inter-broker client's settings: what each secured listener needs is refused by name
when missing, and the broker's SCRAM login completes against the broker's own SCRAM server
and fails on a wrong password or a forged server signature."""

from __future__ import annotations

import re

import pytest

from broker.security.inter_broker import build_peer_security
from broker.security.listeners import Listener, parse_listeners
from broker.security.scram import ScramCredential
from broker.security.scram_client import ScramClient, ScramClientError
from broker.security.scram_exchange import ScramError, ScramExchange
from tests.fixtures.tls import TlsFiles

SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="broker" password="pw";'
)


def _listener(protocol: str) -> Listener:
    (listener,) = parse_listeners(f"{protocol}://127.0.0.1:0")
    return listener


def test_plaintext_needs_nothing() -> None:
    security = build_peer_security(_listener("PLAINTEXT"), {})
    assert security.ssl_context is None and security.mechanism is None


def test_sasl_needs_the_mechanism_and_the_brokers_login() -> None:
    listener = _listener("SASL_PLAINTEXT")
    base = {"sasl.enabled.mechanisms": "SCRAM-SHA-512"}
    with pytest.raises(ValueError, match=re.escape("sasl.mechanism.inter.broker.protocol")):
        build_peer_security(listener, base)
    with pytest.raises(ValueError, match=re.escape("not in the sasl.enabled.mechanisms")):
        build_peer_security(listener, {**base, "sasl.mechanism.inter.broker.protocol": "PLAIN"})
    settings = {**base, "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512"}
    with pytest.raises(ValueError, match=r"listener\.name\.sasl_plaintext\.scram-sha-512\.sasl"):
        build_peer_security(listener, settings)
    key = "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"
    security = build_peer_security(listener, {**settings, key: SCRAM_JAAS})
    assert (security.mechanism, security.username, security.password) == (
        "SCRAM-SHA-512", "broker", "pw",
    )  # fmt: skip
    assert "pw" not in repr(security)


def test_tls_needs_a_truststore(tls_files: TlsFiles) -> None:
    listener = _listener("SSL")
    settings = {"ssl.keystore.location": str(tls_files.server_keystore)}
    with pytest.raises(ValueError, match=re.escape("ssl.truststore.location")):
        build_peer_security(listener, settings)
    security = build_peer_security(
        listener, {**settings, "ssl.truststore.location": str(tls_files.ca)}
    )
    assert security.ssl_context is not None and security.ssl_context.check_hostname
    off = build_peer_security(
        listener,
        {**settings, "ssl.truststore.location": str(tls_files.ca),
         "ssl.endpoint.identification.algorithm": ""},
    )  # fmt: skip
    assert off.ssl_context is not None and not off.ssl_context.check_hostname


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_client_against_the_brokers_server(mechanism: str) -> None:
    cred = ScramCredential.from_password(mechanism, "pw")
    server = ScramExchange(mechanism, lambda user: cred if user == "broker" else None)
    client = ScramClient(mechanism, "broker", "pw")
    server_first = server.client_first(client.first().decode()).encode()
    client.verify(server.client_final(client.final(server_first).decode()).encode())
    assert server.user == "broker"

    wrong = ScramClient(mechanism, "broker", "not-pw")
    server = ScramExchange(mechanism, lambda user: cred)
    server_first = server.client_first(wrong.first().decode()).encode()
    with pytest.raises(ScramError):
        server.client_final(wrong.final(server_first).decode())

    impostor = ScramExchange(mechanism, lambda user: ScramCredential.from_password(mechanism, "x"))
    client = ScramClient(mechanism, "broker", "pw")
    first = impostor.client_first(client.first().decode()).encode()
    client.final(first)
    with pytest.raises(ScramClientError):
        client.verify(b"v=" + b"AAAA")
