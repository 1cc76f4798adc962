"""Client security settings in the forms Kafka users write, for every client Sluice makes.

Users write either librdkafka's keys (``security.protocol``, ``sasl.mechanism``,
``sasl.username``/``sasl.password``, ``ssl.ca.location``, ``ssl.certificate.location``,
``ssl.key.location``) or the Java client's (``sasl.jaas.config``, ``ssl.truststore.location``,
``ssl.keystore.location`` with ``ssl.keystore.type=PEM``, ``ssl.truststore.certificates``,
``ssl.keystore.certificate.chain``/``ssl.keystore.key``, ``ssl.key.password``,
``ssl.endpoint.identification.algorithm``). A leaf module (standard library only) so that every
layer that makes a client (the admin layer, the hub runtime, Spark pipelines, the mirror
connector) translates the same way. :func:`to_librdkafka` turns the Java forms into
librdkafka's (confluent-kafka, kcat); :func:`to_kafka_python` into kafka-python's keyword
arguments. A Java form with no equivalent (JKS/PKCS12 stores, a JAAS login module other than
PLAIN/SCRAM) raises :class:`ClientSecurityError` naming the key, never passes silently.

:func:`redact` masks every secret before a config is logged or shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SECRET_KEYS = ("password", "sasl.jaas.config", "ssl.keystore.key", "ssl.key.pem")
_OPTION = re.compile(r'([A-Za-z0-9_.\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))')
_LOGIN_MODULES = ("PlainLoginModule", "ScramLoginModule")


class ClientSecurityError(ValueError):
    """A client security setting cannot be honoured (names the key, never its value)."""


def is_secret(key: str) -> bool:
    return any(part in key for part in SECRET_KEYS)


def redact(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with every secret value replaced by ``[hidden]``."""
    return {k: "[hidden]" if is_secret(k) and v not in (None, "") else v for k, v in config.items()}


def jaas_credentials(text: str) -> tuple[str, str]:
    """(username, password) of a PLAIN or SCRAM ``sasl.jaas.config``."""
    module = text.strip().split(None, 1)[0] if text.strip() else ""
    if not module.endswith(_LOGIN_MODULES):
        raise ClientSecurityError(
            "sasl.jaas.config: only PlainLoginModule and ScramLoginModule are supported"
        )
    options = {
        m.group(1): m.group(2) if m.group(2) is not None else m.group(3)
        for m in _OPTION.finditer(text)
    }
    if "username" not in options or "password" not in options:
        raise ClientSecurityError('sasl.jaas.config needs username="..." password="..."')
    unescape = re.compile(r"\\(.)")
    return unescape.sub(r"\1", options["username"]), unescape.sub(r"\1", options["password"])


def _store_type(config: Mapping[str, Any], key: str) -> None:
    kind = str(config.get(key, "PEM")).upper()
    if kind != "PEM":
        raise ClientSecurityError(f"{key}={kind} is not supported: convert the store to PEM")


def to_librdkafka(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with Java security keys replaced by librdkafka's (others kept as they are)."""
    out = dict(config)
    java = {k: out.pop(k) for k in list(out) if k in _JAVA_KEYS}
    if not java:
        return out
    _store_type(java, "ssl.truststore.type")
    _store_type(java, "ssl.keystore.type")
    if "sasl.jaas.config" in java:
        out["sasl.username"], out["sasl.password"] = jaas_credentials(java["sasl.jaas.config"])
    if "ssl.truststore.location" in java:
        out["ssl.ca.location"] = java["ssl.truststore.location"]
    if "ssl.truststore.certificates" in java:
        out["ssl.ca.pem"] = java["ssl.truststore.certificates"]
    if "ssl.keystore.location" in java:  # one PEM file holding the key and the chain
        out["ssl.certificate.location"] = out["ssl.key.location"] = java["ssl.keystore.location"]
    if "ssl.keystore.certificate.chain" in java:
        out["ssl.certificate.pem"] = java["ssl.keystore.certificate.chain"]
    if "ssl.keystore.key" in java:
        out["ssl.key.pem"] = java["ssl.keystore.key"]
    if "ssl.endpoint.identification.algorithm" in java:
        algorithm = str(java["ssl.endpoint.identification.algorithm"]).strip().lower()
        out["ssl.endpoint.identification.algorithm"] = algorithm or "none"
    for key in ("ssl.truststore.password", "ssl.keystore.password"):
        if key in java:
            raise ClientSecurityError(f"{key} belongs to JKS/PKCS12 stores; use PEM files")
    return out


_JAVA_KEYS = frozenset({
    "sasl.jaas.config", "ssl.truststore.location", "ssl.truststore.certificates",
    "ssl.truststore.type", "ssl.truststore.password", "ssl.keystore.location",
    "ssl.keystore.type", "ssl.keystore.password", "ssl.keystore.certificate.chain",
    "ssl.keystore.key", "ssl.endpoint.identification.algorithm",
})  # fmt: skip


def to_kafka_python(config: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python (and aiokafka) keyword arguments for the security part of ``config``."""
    rd = to_librdkafka(config)
    kwargs: dict[str, Any] = {}
    if "security.protocol" in rd:
        kwargs["security_protocol"] = str(rd["security.protocol"]).upper()
    if "sasl.mechanism" in rd or "sasl.mechanisms" in rd:
        kwargs["sasl_mechanism"] = str(rd.get("sasl.mechanism", rd.get("sasl.mechanisms")))
    if "sasl.username" in rd:
        kwargs["sasl_plain_username"] = rd["sasl.username"]
        kwargs["sasl_plain_password"] = rd.get("sasl.password")
    for rd_key, kw in (
        ("ssl.ca.location", "ssl_cafile"),
        ("ssl.certificate.location", "ssl_certfile"),
        ("ssl.key.location", "ssl_keyfile"),
        ("ssl.key.password", "ssl_password"),
    ):
        if rd_key in rd:
            kwargs[kw] = str(Path(rd[rd_key]))
    if str(rd.get("ssl.endpoint.identification.algorithm", "https")).lower() == "none":
        kwargs["ssl_check_hostname"] = False
    for key in ("ssl.ca.pem", "ssl.certificate.pem", "ssl.key.pem"):
        if key in rd:
            raise ClientSecurityError(f"{key} (inline PEM) is not supported here; use files")
    return kwargs


def security_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Only the security keys of ``config`` (to hand them to another client)."""
    return {
        k: v for k, v in config.items()
        if k == "security.protocol" or k.startswith(("sasl.", "ssl."))
    }  # fmt: skip


def read_client_properties(path: Path) -> dict[str, str]:
    """A Kafka tools ``--command-config`` file (``key=value`` lines, ``#`` comments)."""
    props: dict[str, str] = {}
    try:
        text = path.read_text()
    except OSError as exc:
        raise ClientSecurityError(f"cannot read {path}: {exc.strerror}") from None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep > 0:
            props[line[:sep].strip()] = line[sep + 1 :].strip()
    return props
