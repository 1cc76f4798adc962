"""The SASL state machine and SCRAM exchange without sockets: PLAIN and SCRAM-SHA-256/512
against scramp's client, and every way the exchange refuses a client."""

from __future__ import annotations

import pytest
import scramp

from broker.security.jaas import JaasError, parse_jaas
from broker.security.sasl import (
    ILLEGAL_SASL_STATE,
    SASL_AUTHENTICATION_FAILED,
    UNSUPPORTED_SASL_MECHANISM,
    SaslFailed,
    SaslSession,
)
from broker.security.scram import FileScramStore, ScramCredential


@pytest.fixture
def store(tmp_path):
    store = FileScramStore(tmp_path)
    store.alter(
        {("alice", m): ScramCredential.from_password(m, "secret")
         for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")},
        set(),
    )  # fmt: skip
    return store


def _session(store=None) -> SaslSession:
    return SaslSession(("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"), {"bob": "pw"}, store)


def test_plain_accepts_the_jaas_user() -> None:
    session = _session()
    assert session.handshake("PLAIN", 1) == 0
    assert session.authenticate(b"\0bob\0pw") == b""
    assert session.authenticated and str(session.principal) == "User:bob"


@pytest.mark.parametrize("token", [b"\0bob\0nope", b"\0eve\0pw", b"carol\0bob\0pw", b"bob"])
def test_plain_refuses(token: bytes) -> None:
    session = _session()
    session.handshake("PLAIN", 1)
    with pytest.raises(SaslFailed) as info:
        session.authenticate(token)
    assert info.value.code == SASL_AUTHENTICATION_FAILED
    assert session.failed and str(session.principal) == "User:ANONYMOUS"


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_round_trips(store, mechanism: str) -> None:
    session = _session(store)
    assert session.handshake(mechanism, 1) == 0
    client = scramp.ScramClient([mechanism], "alice", "secret")
    server_first = session.authenticate(client.get_client_first().encode()).decode()
    client.set_server_first(server_first)
    server_final = session.authenticate(client.get_client_final().encode()).decode()
    client.set_server_final(server_final)  # raises if the server's signature is wrong
    assert session.authenticated and str(session.principal) == "User:alice"


@pytest.mark.parametrize(("user", "password"), [("alice", "wrong"), ("nobody", "secret")])
def test_scram_refuses(store, user: str, password: str) -> None:
    session = _session(store)
    session.handshake("SCRAM-SHA-512", 1)
    client = scramp.ScramClient(["SCRAM-SHA-512"], user, password)
    with pytest.raises(SaslFailed) as info:
        client.set_server_first(session.authenticate(client.get_client_first().encode()).decode())
        session.authenticate(client.get_client_final().encode())
    assert info.value.code == SASL_AUTHENTICATION_FAILED
    assert info.value.message == "Authentication failed: Invalid username or password"


def test_handshake_rules() -> None:
    unknown = _session()
    assert unknown.handshake("GSSAPI", 1) == UNSUPPORTED_SASL_MECHANISM and unknown.failed
    session = _session()
    assert session.handshake("PLAIN", 0) == 0 and session.raw_tokens
    assert session.handshake("PLAIN", 1) == ILLEGAL_SASL_STATE
    fresh = _session()
    with pytest.raises(SaslFailed) as info:
        fresh.authenticate(b"\0bob\0pw")  # before any handshake
    assert info.value.code == ILLEGAL_SASL_STATE


def test_credentials_are_stored_salted(store, tmp_path) -> None:
    text = (tmp_path / FileScramStore.FILE).read_text()
    assert "secret" not in text and "stored_key=" in text
    assert (tmp_path / FileScramStore.FILE).stat().st_mode & 0o777 == 0o600
    assert FileScramStore(tmp_path).get("alice", "SCRAM-SHA-256") == store.get(
        "alice", "SCRAM-SHA-256"
    )


def test_jaas_users() -> None:
    entry = parse_jaas(
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="a\\"b" user_admin="a\\"b" user_x=plain;'
    )
    assert entry.users() == {"admin": 'a"b', "x": "plain"}
    with pytest.raises(JaasError):
        parse_jaas('PlainLoginModule required user_a="1"')  # no ';'
