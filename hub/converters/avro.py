"""``io.confluent.connect.avro.AvroConverter``: Avro with a schema registry, Confluent's way.

Writing: the record's Connect schema becomes an Avro schema (``hub.api.avro_data``), which is
registered under the subject of the configured strategy (or looked up, with
``auto.register.schemas=false``; or replaced by the subject's latest schema, with
``use.latest.version=true``); the value is encoded by fastavro after the 5-byte header.
Reading: the id names the writer's schema; the Connect schema derived from it (with the
registry version as its version when the schema has no ``connect.version``, as Confluent
does) and the decoded value are returned. Both directions are cached (``_registry``).

``connect.meta.data`` (default true) keeps the ``connect.*`` annotations in written schemas;
``scrub.invalid.names`` (default false) rewrites names Avro does not allow.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any, NamedTuple

import fastavro
from pydantic import Field, field_validator

from hub.api import DataError, Schema, SchemaAndValue
from hub.api.avro_data import avro_schema, avro_writer, connect_reader, connect_schema
from hub.converters import _registry as reg


class AvroConverterConfig(reg.RegistryConverterConfig):
    connect_meta_data: bool = Field(
        True, alias="connect.meta.data", description="Write connect.* annotations in schemas."
    )
    scrub_invalid_names: bool = Field(
        False, alias="scrub.invalid.names", description="Rewrite names Avro does not allow."
    )
    enhanced_avro_schema_support: bool = Field(
        False, alias="enhanced.avro.schema.support",
        description="Accepted only as false (Sluice writes Confluent's default mapping).",
    )  # fmt: skip

    @field_validator("enhanced_avro_schema_support")
    @classmethod
    def _only_default(cls, value: bool) -> bool:
        if value:
            raise ValueError("enhanced.avro.schema.support=true is not supported by Sluice")
        return value


class _Writer(NamedTuple):
    prefix: bytes
    parsed: Any  # fastavro's parsed schema
    convert: Any  # Connect value -> datum, or None


class _Reader(NamedTuple):
    schema: Schema
    parsed: Any
    convert: Any


class AvroConverter(reg.RegistryConverter):
    """Avro + Confluent Schema Registry wire format."""

    name = "avro"
    aliases = ("AvroConverter", "io.confluent.connect.avro.AvroConverter")
    config_model = AvroConverterConfig
    config: AvroConverterConfig
    description = "Avro with a schema registry (Confluent wire format: magic byte + schema id)."

    def __init__(self, config: Mapping[str, Any], is_key: bool) -> None:
        super().__init__(config, is_key)
        self._readers: dict[int, _Reader] = {}
        self._buffer = io.BytesIO()

    # -- writing -----------------------------------------------------------------------------

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if schema is None:
            raise DataError(
                "AvroConverter needs a Connect schema, the record has none; use a schema-aware "
                "source or the JsonConverter with schemas.enable=false"
            )
        writer: _Writer = self._writers.get(schema, lambda: self._new_writer(topic, schema))
        datum = writer.convert(value) if writer.convert is not None else value
        buf = self._buffer
        buf.seek(0)
        buf.truncate()
        buf.write(writer.prefix)
        try:
            fastavro.schemaless_writer(buf, writer.parsed, datum)
        except (ValueError, TypeError, AttributeError, KeyError, OverflowError) as exc:
            raise DataError(f"value does not fit its Avro schema: {exc}") from None
        return buf.getvalue()

    def _new_writer(self, topic: str, schema: Schema) -> _Writer:
        avro = avro_schema(schema, meta=self.config.connect_meta_data,
                           scrub_names=self.config.scrub_invalid_names)  # fmt: skip
        record_name = _full_name(avro)
        subject = reg.subject_name(self.strategy, topic, self.is_key, record_name)
        text = json.dumps(avro, separators=(",", ":"))
        client = self.client
        if self.config.use_latest_version:
            latest = reg.registry_call(f"reading the latest {subject}",
                                       lambda: client.version(subject, "latest"))  # fmt: skip
            return _Writer(reg.prefix(latest.id), self._parse(json.loads(latest.schema), latest),
                           avro_writer(schema))  # fmt: skip
        if self.config.auto_register_schemas:
            schema_id = reg.registry_call(f"registering a schema under {subject}",
                                          lambda: client.register(subject, text))  # fmt: skip
        else:
            schema_id = reg.registry_call(f"looking up the schema under {subject}",
                                          lambda: client.lookup(subject, text)).id  # fmt: skip
        try:
            parsed = fastavro.parse_schema(avro)
        except fastavro.schema.SchemaParseException as exc:
            raise DataError(f"the Avro schema of {subject} is invalid: {exc}") from None
        return _Writer(reg.prefix(schema_id), parsed, avro_writer(schema))

    # -- reading -----------------------------------------------------------------------------

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        schema_id, payload = reg.frame(data)
        reader = self._readers.get(schema_id)
        if reader is None:
            reader = self._new_reader(topic, schema_id)
        try:
            datum = fastavro.schemaless_reader(io.BytesIO(payload), reader.parsed, None)
        except (ValueError, TypeError, EOFError, IndexError, UnicodeDecodeError) as exc:
            raise DataError(f"Avro payload of schema id {schema_id} is corrupt: {exc}") from None
        value = reader.convert(datum) if reader.convert is not None else datum
        return SchemaAndValue(reader.schema, value)

    def _new_reader(self, topic: str, schema_id: int) -> _Reader:
        client = self.client
        found = reg.registry_call(f"reading schema id {schema_id}",
                                  lambda: client.schema_by_id(schema_id))  # fmt: skip
        if found.schema_type != "AVRO":
            raise DataError(f"schema id {schema_id} is {found.schema_type}, not AVRO")
        avro = json.loads(found.schema)
        named: dict[str, Any] = {}
        parsed = self._parse(avro, found, named)
        version = self._registry_version(topic, schema_id, avro)
        schema = connect_schema(avro, named, version)
        reader = _Reader(schema, parsed, connect_reader(schema))
        if len(self._readers) >= 1000:
            self._readers.clear()
        self._readers[schema_id] = reader
        return reader

    def _registry_version(self, topic: str, schema_id: int, avro: Any) -> int | None:
        """The version of ``schema_id`` under this converter's subject (None if not there)."""
        if isinstance(avro, dict) and "connect.version" in avro:
            return None
        try:
            subject = reg.subject_name(self.strategy, topic, self.is_key, _full_name(avro))
        except DataError:
            return None
        try:
            pairs = self.client.request("GET", f"/schemas/ids/{schema_id}/versions")
        except reg.RegistryClientError:
            return None
        return next((int(p["version"]) for p in pairs if p.get("subject") == subject), None)

    def _parse(self, avro: Any, found: Any, named: dict[str, Any] | None = None) -> Any:
        """fastavro's parsed schema, referenced named types (transitively) loaded first."""
        named_schemas: dict[str, Any] = {}
        for ref in getattr(found, "references", ()):
            self._load_reference(ref, named_schemas, named)
        try:
            return fastavro.parse_schema(avro, named_schemas=named_schemas)
        except fastavro.schema.SchemaParseException as exc:
            raise DataError(f"registered Avro schema {found.id} is invalid: {exc}") from None

    def _load_reference(self, ref: Mapping[str, Any], named_schemas: dict[str, Any],
                        named: dict[str, Any] | None) -> None:  # fmt: skip
        subject, version = str(ref["subject"]), int(ref["version"])
        client = self.client
        found = reg.registry_call(f"reading reference {subject} v{version}",
                                  lambda: client.version(subject, version))  # fmt: skip
        for inner in found.references:
            self._load_reference(inner, named_schemas, named)
        node = json.loads(found.schema)
        fastavro.parse_schema(node, named_schemas=named_schemas)
        if named is not None:
            _collect_named(node, "", named)


def _full_name(avro: Any) -> str | None:
    if isinstance(avro, dict) and avro.get("type") in ("record", "enum", "fixed"):
        name = str(avro["name"])
        namespace = avro.get("namespace")
        return name if "." in name or not namespace else f"{namespace}.{name}"
    return None


def _collect_named(node: Any, namespace: str, out: dict[str, Any]) -> None:
    if isinstance(node, list):
        for item in node:
            _collect_named(item, namespace, out)
        return
    if not isinstance(node, dict):
        return
    full = _full_name({**node, "namespace": node.get("namespace", namespace)}) if (
        node.get("type") in ("record", "enum", "fixed")) else None  # fmt: skip
    if full:
        out[full] = node
        namespace = full.rpartition(".")[0]
    for key in ("fields", "items", "values", "type"):
        child = node.get(key)
        if key == "fields" and isinstance(child, list):
            for f in child:
                _collect_named(f.get("type"), namespace, out)
        elif isinstance(child, dict | list):
            _collect_named(child, namespace, out)
