"""Listeners as Kafka names them: ``listeners``, ``advertised.listeners`` and the protocol map.

A listener is a name, a security protocol and an address: ``PLAINTEXT://127.0.0.1:9092``
names the listener ``PLAINTEXT`` with protocol ``PLAINTEXT``; ``CLIENT://:9093`` with
``listener.security.protocol.map=CLIENT:SASL_SSL`` names it ``CLIENT`` and secures it with
SASL over TLS. Each listener gets its own socket, and a client is told (Metadata,
FindCoordinator, DescribeCluster) the advertised address *of the listener it connected to*, as
in Kafka, so a client that bootstrapped over TLS keeps talking TLS.

Settings of one listener are looked up Kafka's way: ``listener.name.<name>.<key>`` (name in
lower case) first, then the plain ``<key>`` (:func:`listener_setting`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from broker.errors import ListenerError as ListenerError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""The security protocols Kafka defines, all served here."""


@dataclass(frozen=True)
class Listener:
    """One socket the broker accepts clients on."""

    name: str
    """Upper-case listener name (``PLAINTEXT``, ``SASL_SSL``, ``CLIENT``...)."""
    protocol: str
    """One of :data:`PROTOCOLS`."""
    host: str
    port: int
    advertised_host: str | None = None
    advertised_port: int | None = None

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    @property
    def authenticates(self) -> bool:
        """True when no client reaches the APIs without a credential (SASL, or TLS with a
        required client certificate is checked by the caller, which knows the TLS settings)."""
        return self.sasl

    @property
    def advertised(self) -> tuple[str, int]:
        """The (host, port) clients of this listener are told to use."""
        host = self.advertised_host or self.host
        if host in ("", "0.0.0.0", "::"):
            host = "localhost"  # a wildcard bind address is not something to connect to
        return host, self.advertised_port or self.port

    def url(self, advertised: bool = False) -> str:
        host, port = self.advertised if advertised else (self.host, self.port)
        return f"{self.name}://{'[' + host + ']' if ':' in host else host}:{port}"


def _split(value: str, key: str) -> list[tuple[str, str, int]]:
    """``NAME://host:port,...`` -> [(NAME, host, port)], refusing duplicates by name."""
    out: list[tuple[str, str, int]] = []
    for item in (v.strip() for v in value.split(",")):
        if not item:
            continue
        name, sep, address = item.partition("://")
        if not sep or not name:
            raise ListenerError(f"{key}: expected NAME://host:port, got {item!r}")
        host, colon, port = address.rpartition(":")
        if not colon:
            raise ListenerError(f"{key}: {item!r} has no port")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        try:
            port_no = int(port)
        except ValueError:
            raise ListenerError(f"{key}: bad port in {item!r}") from None
        if any(n == name.upper() for n, _, _ in out):
            raise ListenerError(f"{key}: listener {name} is listed twice")
        out.append((name.upper(), host, port_no))
    if not out:
        raise ListenerError(f"{key}: no listener in {value!r}")
    return out


def parse_protocol_map(value: str | None) -> dict[str, str]:
    """``listener.security.protocol.map`` (``NAME:PROTOCOL,...``); Kafka's default maps each
    protocol name to itself, which is what an absent map means here."""
    mapping = {p: p for p in PROTOCOLS}
    if value is None:
        return mapping
    mapping = {}
    for pair in (p.strip() for p in value.split(",")):
        if not pair:
            continue
        name, sep, proto = pair.partition(":")
        proto = proto.strip().upper()
        if not sep or proto not in PROTOCOLS:
            raise ListenerError(
                f"listener.security.protocol.map: {pair!r} must be NAME:PROTOCOL with PROTOCOL "
                f"one of {', '.join(PROTOCOLS)}"
            )
        mapping[name.strip().upper()] = proto
    return mapping


def parse_listeners(
    listeners: str, advertised: str | None = None, protocol_map: str | None = None
) -> tuple[Listener, ...]:
    """The three properties -> listeners, in ``listeners`` order (the first one is the one
    ``--host``/``--port`` move, see ``BrokerConfig.effective_listeners``)."""
    mapping = parse_protocol_map(protocol_map)
    adv = (
        {n: (h, p) for n, h, p in _split(advertised, "advertised.listeners")} if advertised else {}
    )
    out = []
    for name, host, port in _split(listeners, "listeners"):
        if name not in mapping:
            raise ListenerError(
                f"listeners: {name} is not a security protocol; map it in "
                "listener.security.protocol.map (e.g. " + f"{name}:SASL_SSL)"
            )
        a_host, a_port = adv.pop(name, (None, None))
        out.append(Listener(name, mapping[name], host, port, a_host or None, a_port))
    if adv:
        raise ListenerError(f"advertised.listeners: {', '.join(sorted(adv))} not in listeners")
    return tuple(out)


def listener_setting(settings: Mapping[str, str], listener: str, key: str) -> str | None:
    """``listener.name.<listener>.<key>``, else ``<key>``, else None (Kafka's lookup order)."""
    prefixed = f"listener.name.{listener.lower()}.{key}"
    if prefixed in settings:
        return settings[prefixed]
    return settings.get(key)
