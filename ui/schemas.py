"""The console's schema-registry views: subjects with versions and compatibility, one
subject's versions, and decoding of registry-framed messages for the message browser.

The registry is reached over its REST API (``schema_registry.client``) at the worker's
``schema.registry.url`` (``sluice up`` sets it to the registry it serves) with the worker's
REST credentials, so the console shows any Confluent-compatible registry the same way.

Decoding: a value starting with magic byte 0 and a known schema id is decoded with the writer's
schema (Avro by fastavro, JSON Schema payloads as they are, Protobuf through a dynamic message
class) and shown as JSON, with the schema id and type; anything that fails stays as it was.
Schemas are cached per id (ids never change meaning).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import io
import json
import threading
from typing import Any

from schema_registry.client import RegistryClient, RegistryClientError

_LOCK = threading.Lock()
_DECODERS: dict[tuple[str, int], Any] = {}


def converter_settings(worker_config: Any) -> dict[str, str] | None:
    """Registry settings in the converters' own keys, or None when no registry is known."""
    raw = worker_config.raw() if hasattr(worker_config, "raw") else dict(worker_config or {})
    url = raw.get("schema.registry.url")
    if not url:
        return None
    out = {"schema.registry.url": str(url)}
    if raw.get("rest.auth.token"):
        out["bearer.auth.credentials.source"] = "STATIC_TOKEN"
        out["bearer.auth.token"] = str(raw["rest.auth.token"])
    elif raw.get("rest.auth.basic"):
        out["basic.auth.credentials.source"] = "USER_INFO"
        out["basic.auth.user.info"] = str(raw["rest.auth.basic"])
    return out


class Registry:
    """The console's view of one registry: a client and a Protobuf decoder sharing caches."""

    def __init__(self, settings: dict[str, str]) -> None:
        from hub.converters._registry import RegistryConverterConfig, make_client

        self.settings = settings
        self.client = make_client(RegistryConverterConfig.parse(settings))
        self._protobuf: Any = None

    def protobuf(self) -> Any:
        if self._protobuf is None:
            from hub.converters.protobuf import ProtobufConverter

            self._protobuf = ProtobufConverter(self.settings, False)
        return self._protobuf


def subjects(client: RegistryClient) -> list[dict[str, Any]]:
    out = []
    for subject in client.subjects():
        latest = client.version(subject, "latest")
        out.append({
            "subject": subject, "versions": client.versions(subject),
            "latest_version": latest.version, "latest_id": latest.id,
            "type": latest.schema_type, "compatibility": client.compatibility(subject),
        })  # fmt: skip
    return out


def subject(client: RegistryClient, name: str) -> dict[str, Any]:
    versions = []
    for number in client.versions(name):
        found = client.version(name, number)
        versions.append({"version": number, "id": found.id, "type": found.schema_type,
                         "schema": found.schema, "references": list(found.references)})  # fmt: skip
    return {"subject": name, "compatibility": client.compatibility(name), "versions": versions}


def decode_records(registry: Registry, records: list[dict[str, Any]]) -> None:
    """Replaces framed keys/values of browsed records by their decoded JSON, in place."""
    for record in records:
        for part in ("key", "value"):
            raw = _raw(record.get(part), record.get(f"{part}_encoding"))
            if raw is None or len(raw) < 5 or raw[0] != 0:
                continue
            decoded = _decode(registry, raw)
            if decoded is not None:
                kind, schema_id, value = decoded
                record[f"{part}_raw"] = base64.b64encode(raw).decode("ascii")  # hex/base64 views
                record[part] = json.dumps(value, default=_plain, ensure_ascii=False)
                record[f"{part}_encoding"] = kind
                record[f"{part}_schema_id"] = schema_id


def _raw(text: Any, encoding: Any) -> bytes | None:
    if text is None:
        return None
    if encoding == "base64":
        return base64.b64decode(text)
    if encoding == "text":
        return str(text).encode("utf-8")
    return None


def _decode(registry: Registry, raw: bytes) -> tuple[str, int, Any] | None:
    client = registry.client
    schema_id = int.from_bytes(raw[1:5], "big")
    try:
        found = client.schema_by_id(schema_id)
    except RegistryClientError:
        return None
    try:
        if found.schema_type == "AVRO":
            return "avro", schema_id, _avro(client, schema_id, found)(raw[5:])
        if found.schema_type == "JSON":
            return "json-schema", schema_id, json.loads(raw[5:])
        from google.protobuf import json_format

        _, message = registry.protobuf().message(raw)
        return (
            "protobuf",
            schema_id,
            json_format.MessageToDict(message, preserving_proto_field_name=True),
        )
    except Exception:  # a payload that does not match its schema: show the bytes as they are
        return None


def _avro(client: RegistryClient, schema_id: int, found: Any) -> Any:
    import fastavro

    key = ("AVRO", schema_id)
    with _LOCK:
        hit = _DECODERS.get(key)
    if hit is None:
        named: dict[str, Any] = {}
        for ref in found.references:
            ref_schema = client.version(str(ref["subject"]), int(ref["version"]))
            fastavro.parse_schema(json.loads(ref_schema.schema), named_schemas=named)
        parsed = fastavro.parse_schema(json.loads(found.schema), named_schemas=named)

        def hit(payload: bytes) -> Any:
            return fastavro.schemaless_reader(io.BytesIO(payload), parsed, None)

        with _LOCK:
            _DECODERS[key] = hit
    return hit


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)
