"""confluent-kafka settings for the mirror connectors' own clients, from MirrorMaker 2's keys.

MirrorMaker 2 builds each client from three layers (later wins), e.g. the source consumer:

1. ``source.cluster.<key>`` for the cluster keys only: ``bootstrap.servers``,
   ``security.protocol``, ``ssl.*``, ``sasl.*`` (other ``source.cluster.*`` keys are not
   client settings and are rejected by the config model);
2. ``consumer.<key>`` (every client of that kind, on either cluster);
3. ``source.consumer.<key>``.

The same for ``producer``/``admin`` and for the ``target`` side. ``client.id`` becomes
``[<user's>|]<source>-><target>|<connector>|<role>`` as in Kafka.

Java client keys that librdkafka spells differently are translated: ``sasl.jaas.config`` of the
PLAIN or SCRAM login modules becomes ``sasl.username``/``sasl.password``, a PEM
``ssl.truststore.location`` becomes ``ssl.ca.location``, an empty
``ssl.endpoint.identification.algorithm`` becomes ``none``; serializer and deserializer classes
are dropped (MirrorMaker 2 always uses byte arrays, whatever they say). A Java-only key with no
equivalent raises ``ClientConfigError`` naming it; any other key goes to librdkafka, which
rejects what it does not know when the client is created. Values are never logged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from connectors.mirror.errors import ClientConfigError
from hub.api.client_settings import client_setting_errors

Side = Literal["source", "target"]
Kind = Literal["consumer", "producer", "admin"]

CLUSTER_KEY = re.compile(r"(bootstrap\.servers|security\.protocol|ssl\..+|sasl\..+)")

# Keys under the ``consumer.``/``producer.``/``admin.`` prefixes that are MirrorMaker settings,
# not client settings.
MIRROR_KEYS = frozenset({"consumer.poll.timeout.ms", "admin.timeout.ms"})

_DROPPED = frozenset(
    {"key.deserializer", "value.deserializer", "key.serializer", "value.serializer"}
)
_JAAS = re.compile(
    r"\s*org\.apache\.kafka\.common\.security\.(plain\.PlainLoginModule|scram\.ScramLoginModule)"
    r"\s+required\s+(?P<options>.*?);?\s*$",
    re.S,
)
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def cluster_settings(raw: Mapping[str, Any], side: Side) -> dict[str, str]:
    """``<side>.cluster.<key>`` for the cluster keys, without the prefix."""
    prefix = f"{side}.cluster."
    return {
        k[len(prefix) :]: str(v)
        for k, v in raw.items()
        if k.startswith(prefix) and CLUSTER_KEY.fullmatch(k[len(prefix) :])
    }


def client_config(
    raw: Mapping[str, Any], side: Side, kind: Kind, label: str, role: str
) -> dict[str, str]:
    """Settings for one client; ``label`` is ``<source>-><target>|<connector>``."""
    settings = cluster_settings(raw, side)
    for prefix in (f"{kind}.", f"{side}.{kind}."):
        for key, value in raw.items():
            if key.startswith(prefix) and key not in MIRROR_KEYS:
                settings[key[len(prefix) :]] = str(value)
    user_id = settings.get("client.id")
    settings["client.id"] = (f"{user_id}|" if user_id else "") + f"{label}|{role}"
    return translate(settings, f"{side} {kind}")


def translate(settings: Mapping[str, str], what: str) -> dict[str, str]:
    """Java client keys -> librdkafka's (see the module docstring)."""
    refused = client_setting_errors(settings)  # settings that load code or run commands
    if refused:
        key, reasons = next(iter(refused.items()))
        raise ClientConfigError(f"{what} client: {key} is {reasons[0]}")
    out: dict[str, str] = {}
    truststore_type = settings.get("ssl.truststore.type", "JKS").upper()
    for key, value in settings.items():
        if key in _DROPPED or key in ("ssl.truststore.type", "ssl.keystore.type"):
            continue
        if key == "sasl.jaas.config":
            out.update(_jaas(value, what))
        elif key == "ssl.truststore.location":
            if truststore_type != "PEM":
                raise ClientConfigError(
                    f"{what} client: ssl.truststore.location needs ssl.truststore.type=PEM "
                    "(librdkafka reads PEM CA files; or set ssl.ca.location)"
                )
            out["ssl.ca.location"] = value
        elif key == "ssl.truststore.password":
            continue  # a PEM truststore has no password
        elif key == "ssl.keystore.location" and settings.get("ssl.keystore.type", "PKCS12") not in (
            "PKCS12",
            "pkcs12",
        ):
            raise ClientConfigError(
                f"{what} client: ssl.keystore.location must be a PKCS12 file "
                "(ssl.keystore.type=PKCS12), or use ssl.certificate.location/ssl.key.location"
            )
        elif key == "ssl.endpoint.identification.algorithm" and not value:
            out[key] = "none"
        else:
            out[key] = value
    return out


def _jaas(value: str, what: str) -> dict[str, str]:
    match = _JAAS.fullmatch(value)
    if match is None:
        raise ClientConfigError(
            f"{what} client: sasl.jaas.config is supported for the PLAIN and SCRAM login "
            "modules only (or set sasl.username and sasl.password)"
        )
    options = {k: re.sub(r"\\(.)", r"\1", v) for k, v in _JAAS_OPTION.findall(match["options"])}
    if "username" not in options or "password" not in options:
        raise ClientConfigError(f"{what} client: sasl.jaas.config needs username and password")
    return {"sasl.username": options["username"], "sasl.password": options["password"]}
