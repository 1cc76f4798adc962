"""Each listener's security, resolved once at start from ``BrokerConfig.security``.

Which keys exist (checked when the properties are read, so a typo fails the start with its
name): the TLS keys of ``tls.py``; ``sasl.enabled.mechanisms`` (PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512; a SASL listener must set it: Kafka's default, GSSAPI, is not served);
``sasl.server.max.receive.size``; and, per listener only,
``listener.name.<l>.plain.sasl.jaas.config`` whose ``user_<name>="<password>"`` options are the
PLAIN users (Kafka's ``PlainLoginModule``). The inter-broker client's keys
(``sasl.mechanism.inter.broker.protocol``, ``listener.name.<l>.<mechanism>.sasl.jaas.config``'s
username/password, ``ssl.endpoint.identification.algorithm``) are read by ``inter_broker.py``.
SCRAM users live in the ``ScramStore`` (``sluice users``, AlterUserScramCredentials).
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

from broker.security.jaas import JaasError, parse_jaas
from broker.security.listeners import Listener, ListenerError, listener_setting
from broker.security.sasl import DEFAULT_MAX_RECEIVE, SUPPORTED, SaslSession
from broker.security.scram import ScramStore
from broker.security.tls import server_context

TLS_KEYS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.certificate.chain",
    "ssl.keystore.key", "ssl.key.password", "ssl.truststore.type", "ssl.truststore.location",
    "ssl.truststore.certificates", "ssl.client.auth", "ssl.enabled.protocols",
    "ssl.endpoint.identification.algorithm",
})  # fmt: skip
SASL_KEYS = frozenset({"sasl.enabled.mechanisms", "sasl.server.max.receive.size"})
_PER_LISTENER_ONLY = frozenset({
    "plain.sasl.jaas.config", "scram-sha-256.sasl.jaas.config", "scram-sha-512.sasl.jaas.config",
})  # fmt: skip
_BROKER_ONLY = frozenset({"sasl.mechanism.inter.broker.protocol"})


def is_security_key(key: str) -> bool:
    return key.startswith(("ssl.", "sasl.", "listener.name."))


def _split_key(key: str, names: set[str]) -> tuple[str | None, str]:
    """``listener.name.sasl_ssl.ssl.client.auth`` -> ("SASL_SSL", "ssl.client.auth")."""
    if not key.startswith("listener.name."):
        return None, key
    rest = key[len("listener.name.") :]
    for name in sorted(names, key=len, reverse=True):
        if rest.lower().startswith(name.lower() + "."):
            return name, rest[len(name) + 1 :]
    raise ListenerError(f"{key}: names no listener (listeners: {', '.join(sorted(names))})")


def check_security_keys(settings: Mapping[str, str], listeners: tuple[Listener, ...]) -> None:
    """Refuses, by name, every security key this broker does not implement."""
    names = {item.name for item in listeners} or {"PLAINTEXT"}
    for key in settings:
        listener, bare = _split_key(key, names)
        if bare in TLS_KEYS or bare in SASL_KEYS:
            continue
        if listener is not None and bare in _PER_LISTENER_ONLY:
            continue
        if listener is None and bare in _BROKER_ONLY:
            continue
        raise ListenerError(
            f"{key} is not supported by this broker (see docs/security.md for the TLS and SASL "
            "keys it reads)"
        )


@dataclass
class ListenerSecurity:
    """What a connection on ``listener`` must go through before it is served."""

    listener: Listener
    ssl_context: ssl.SSLContext | None = None
    mechanisms: tuple[str, ...] = ()
    plain_users: dict[str, str] = field(default_factory=dict)
    scram: ScramStore | None = None
    max_receive: int = DEFAULT_MAX_RECEIVE
    client_auth_required: bool = False
    reauth_ms: int = 0
    """``connections.max.reauth.ms``: how long a SASL session lasts (0: for ever)."""

    def new_session(self, peer: str) -> SaslSession | None:
        """A SASL state machine for a new connection, or None on a non-SASL listener."""
        if not self.listener.sasl:
            return None
        return SaslSession(self.mechanisms, self.plain_users, self.scram, peer, self.reauth_ms)

    @property
    def authenticated_only(self) -> bool:
        """True if every client of this listener proves who it is (SASL, or a required
        client certificate): such a listener may bind beyond loopback."""
        return self.listener.sasl or self.client_auth_required


def build(
    listener: Listener, settings: Mapping[str, str], scram: ScramStore | None
) -> ListenerSecurity:
    """Resolves the listener's settings; raises ValueError naming the key at fault."""

    def get(key: str) -> str | None:
        return listener_setting(settings, listener.name, key)

    where = f"listener {listener.name}"
    security = ListenerSecurity(listener, scram=scram)
    if listener.tls:
        security.ssl_context = server_context(get, where)
        security.client_auth_required = (get("ssl.client.auth") or "none").lower() == "required"
    if not listener.sasl:
        return security
    raw = get("sasl.enabled.mechanisms")
    mechanisms = tuple(m.strip().upper() for m in (raw or "").split(",") if m.strip())
    if not mechanisms:
        raise ListenerError(
            f"{where}: set sasl.enabled.mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"
        )
    unknown = [m for m in mechanisms if m not in SUPPORTED]
    if unknown:
        raise ListenerError(
            f"{where}: sasl.enabled.mechanisms: {', '.join(unknown)} not supported "
            f"(only {', '.join(SUPPORTED)})"
        )
    security.mechanisms = mechanisms
    if "PLAIN" in mechanisms:
        key = f"listener.name.{listener.name.lower()}.plain.sasl.jaas.config"
        jaas = settings.get(key)
        if jaas is None:
            raise ListenerError(f'{where}: PLAIN needs {key} with user_<name>="<password>" entries')
        try:
            security.plain_users = parse_jaas(jaas).users()
        except JaasError as exc:
            raise ListenerError(f"{where}: {exc}") from None
    size = get("sasl.server.max.receive.size")
    if size is not None:
        security.max_receive = int(size)
    return security
