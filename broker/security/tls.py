"""TLS for SSL and SASL_SSL listeners, from Kafka's PEM keystore/truststore settings.

Keys (each also as ``listener.name.<l>.<key>``): ``ssl.keystore.type=PEM`` with either
``ssl.keystore.certificate.chain`` + ``ssl.keystore.key`` (inline PEM text) or
``ssl.keystore.location`` (one PEM file holding the key and the chain); ``ssl.key.password``
decrypts an encrypted key; ``ssl.truststore.certificates`` (inline PEM) or
``ssl.truststore.location`` (a PEM file) are the CAs client certificates must chain to;
``ssl.client.auth`` = ``required`` | ``requested`` | ``none``; ``ssl.enabled.protocols``
(``TLSv1.2,TLSv1.3``, the default). JKS/PKCS12 stores are refused by name: Python's ``ssl``
reads PEM.

Inline keys are handed to OpenSSL through an anonymous in-memory file (``memfd``), so the
private key is never written to disk by the broker.

The principal of a TLS client with a certificate is ``User:`` + its subject in RFC 4514 form
(``CN=alice,O=Example``): the string Kafka's default principal builder uses.
"""

from __future__ import annotations

import contextlib
import os
import re
import ssl
from collections.abc import Callable, Iterator
from typing import Any

from broker.errors import TlsConfigError as TlsConfigError
from broker.security.principal import ANONYMOUS, KafkaPrincipal

CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL,
               "none": ssl.CERT_NONE}  # fmt: skip
_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)


def normalize_pem(text: str) -> str:
    """Re-wraps inline PEM whose line breaks a properties file lost (a backslash continuation
    joins lines; Kafka accepts that too): each block's base64 body, without whitespace or
    literal backslash-n, in 64-column lines."""
    blocks = []
    for kind, body in _PEM_BLOCK.findall(text):
        data = re.sub(r"\s+|\\n", "", body)
        lines = "\n".join(data[i : i + 64] for i in range(0, len(data), 64))
        blocks.append(f"-----BEGIN {kind}-----\n{lines}\n-----END {kind}-----\n")
    return "".join(blocks) or text


@contextlib.contextmanager
def _pem_file(text: str) -> Iterator[str]:
    """A path OpenSSL can read ``text`` from, backed by memory only."""
    fd = os.memfd_create("sluice-pem", os.MFD_CLOEXEC)
    try:
        os.write(fd, normalize_pem(text).encode())
        yield f"/proc/self/fd/{fd}"
    finally:
        os.close(fd)


def server_context(get: Callable[[str], str | None], where: str) -> ssl.SSLContext:
    """The listener's ``SSLContext``; ``get(key)`` reads a setting, ``where`` names the
    listener in errors."""
    for key in ("ssl.keystore.type", "ssl.truststore.type"):
        value = get(key)
        if value is not None and value.upper() != "PEM":
            raise TlsConfigError(f"{where}: {key}={value} is not supported; use PEM")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    protocols = [p.strip() for p in (get("ssl.enabled.protocols") or "TLSv1.2,TLSv1.3").split(",")]
    unknown = [p for p in protocols if p not in _VERSIONS]
    if unknown or not protocols:
        raise TlsConfigError(f"{where}: ssl.enabled.protocols: {unknown} (TLSv1.2, TLSv1.3 only)")
    ctx.minimum_version = min(_VERSIONS[p] for p in protocols)
    ctx.maximum_version = max(_VERSIONS[p] for p in protocols)
    password = get("ssl.key.password")
    chain = get("ssl.keystore.certificate.chain")
    key_pem = get("ssl.keystore.key")
    location = get("ssl.keystore.location")
    try:
        if chain is not None or key_pem is not None:
            if chain is None or key_pem is None or location is not None:
                raise TlsConfigError(
                    f"{where}: set both ssl.keystore.certificate.chain and ssl.keystore.key "
                    "(inline PEM), or ssl.keystore.location alone"
                )
            with _pem_file(chain) as cert_path, _pem_file(key_pem) as key_path:
                ctx.load_cert_chain(cert_path, key_path, password=password)
        elif location is not None:
            ctx.load_cert_chain(location, password=password)
        else:
            raise TlsConfigError(
                f"{where}: a TLS listener needs ssl.keystore.location or "
                "ssl.keystore.certificate.chain + ssl.keystore.key"
            )
    except (ssl.SSLError, OSError) as exc:
        source = f" {location}" if location is not None and chain is None else " (inline PEM)"
        raise TlsConfigError(f"{where}: cannot load the keystore{source}: {exc}") from None
    auth = (get("ssl.client.auth") or "none").lower()
    if auth not in CLIENT_AUTH:
        raise TlsConfigError(f"{where}: ssl.client.auth={auth} (required, requested or none)")
    ctx.verify_mode = CLIENT_AUTH[auth]
    cas, ca_location = get("ssl.truststore.certificates"), get("ssl.truststore.location")
    try:
        if cas is not None:
            ctx.load_verify_locations(cadata=normalize_pem(cas))
        if ca_location is not None:
            ctx.load_verify_locations(cafile=ca_location)
    except (ssl.SSLError, OSError) as exc:
        source = f" {ca_location}" if ca_location is not None else ""
        raise TlsConfigError(f"{where}: cannot load the truststore{source}: {exc}") from None
    if auth != "none" and cas is None and ca_location is None:
        raise TlsConfigError(
            f"{where}: ssl.client.auth={auth} needs ssl.truststore.certificates or "
            "ssl.truststore.location"
        )
    return ctx


def certificate_principal(ssl_object: Any) -> KafkaPrincipal:
    """``User:<subject DN>`` of the client's verified certificate, or ANONYMOUS without one."""
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return ANONYMOUS
    from cryptography import x509

    return KafkaPrincipal("User", x509.load_der_x509_certificate(der).subject.rfc4514_string())
