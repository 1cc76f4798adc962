"""How this broker connects to its peers: the inter-broker listener's protocol, seen from the
client side (replica fetchers, transaction markers).

Kafka's broker-side client settings, read from the broker's properties:

- TLS (SSL, SASL_SSL): the listener's truststore (``ssl.truststore.location`` or
  ``ssl.truststore.certificates``) checks the peer's certificate, and its keystore is offered as
  the client certificate, as Kafka's inter-broker client does; ``ssl.endpoint.identification.
  algorithm`` (default ``https``: the host name must match; empty turns the check off).
- SASL (SASL_PLAINTEXT, SASL_SSL): ``sasl.mechanism.inter.broker.protocol`` (Kafka's default,
  GSSAPI, is not served, so it must be set) and the ``username``/``password`` options of
  ``listener.name.<l>.<mechanism>.sasl.jaas.config``: the broker's own login, beside the
  ``user_<name>`` entries a PLAIN listener serves.

The peers then see this broker's principal (``User:<username>``, or its certificate subject),
which needs CLUSTER_ACTION on the cluster (or to be a super user) when an authorizer is on.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass

from broker.security.jaas import JaasError, parse_jaas
from broker.security.listeners import Listener, ListenerError, listener_setting
from broker.security.tls import TlsConfigError, _pem_file, normalize_pem

MECHANISM_KEY = "sasl.mechanism.inter.broker.protocol"


@dataclass(frozen=True)
class PeerSecurity:
    """What a connection to a peer's inter-broker listener does before its first request."""

    ssl_context: ssl.SSLContext | None = None
    mechanism: str | None = None
    username: str = ""
    password: str = ""

    def __repr__(self) -> str:  # never show the password
        return f"PeerSecurity(tls={self.ssl_context is not None}, mechanism={self.mechanism})"


PLAINTEXT = PeerSecurity()


def build_peer_security(listener: Listener, settings: Mapping[str, str]) -> PeerSecurity:
    """The client side of ``listener``; raises ValueError naming the key at fault."""
    where = f"inter.broker.listener.name {listener.name}"
    context = _client_context(listener, settings, where) if listener.tls else None
    if not listener.sasl:
        return PeerSecurity(context)
    mechanism = (settings.get(MECHANISM_KEY) or "").strip().upper()
    if not mechanism:
        raise ListenerError(
            f"{where} uses {listener.protocol}: set {MECHANISM_KEY} (PLAIN, SCRAM-SHA-256 or "
            "SCRAM-SHA-512)"
        )
    enabled = listener_setting(settings, listener.name, "sasl.enabled.mechanisms") or ""
    if mechanism not in {m.strip().upper() for m in enabled.split(",")}:
        raise ListenerError(
            f"{MECHANISM_KEY}={mechanism} is not in the sasl.enabled.mechanisms of listener "
            f"{listener.name}"
        )
    key = f"listener.name.{listener.name.lower()}.{mechanism.lower()}.sasl.jaas.config"
    jaas = settings.get(key)
    if jaas is None:
        raise ListenerError(
            f'{where}: set {key} with username="..." password="..." (the broker\'s own login)'
        )
    try:
        options = parse_jaas(jaas).options
    except JaasError as exc:
        raise ListenerError(f"{where}: {exc}") from None
    if not options.get("username") or "password" not in options:
        raise ListenerError(f"{key}: needs username and password options (the broker's login)")
    return PeerSecurity(context, mechanism, options["username"], options["password"])


def _client_context(listener: Listener, settings: Mapping[str, str], where: str) -> ssl.SSLContext:
    def get(key: str) -> str | None:
        return listener_setting(settings, listener.name, key)

    cas, ca_location = get("ssl.truststore.certificates"), get("ssl.truststore.location")
    if cas is None and ca_location is None:
        raise TlsConfigError(
            f"{where}: brokers verify each other's certificates; set ssl.truststore.location "
            f"or ssl.truststore.certificates for listener {listener.name}"
        )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    algorithm = get("ssl.endpoint.identification.algorithm")
    ctx.check_hostname = (algorithm if algorithm is not None else "https").strip() != ""
    try:
        if cas is not None:
            ctx.load_verify_locations(cadata=normalize_pem(cas))
        if ca_location is not None:
            ctx.load_verify_locations(cafile=ca_location)
        chain, key_pem = get("ssl.keystore.certificate.chain"), get("ssl.keystore.key")
        password, location = get("ssl.key.password"), get("ssl.keystore.location")
        if chain is not None and key_pem is not None:
            with _pem_file(chain) as cert_path, _pem_file(key_pem) as key_path:
                ctx.load_cert_chain(cert_path, key_path, password=password)
        elif location is not None:
            ctx.load_cert_chain(location, password=password)
    except (ssl.SSLError, OSError) as exc:
        raise TlsConfigError(f"{where}: cannot load the TLS stores: {exc}") from None
    return ctx
