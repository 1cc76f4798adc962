"""``io.confluent.connect.json.JsonSchemaConverter``: JSON + a registered JSON Schema.

The payload after the 5-byte header is the value as Kafka Connect's JsonConverter renders it
without an envelope (bytes and Decimals as base64, temporal types as numbers); the schema
(``_json_schema_data``) is registered as type JSON under the strategy's subject. Reading gives
the Connect schema of the writer's registered schema (one object per id) and the decoded
value. ``json.fail.invalid.schema=true`` also validates each written value against its JSON
Schema with the ``jsonschema`` library (off by default, as in Confluent).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson
from pydantic import Field

from hub.api import DataError, Schema, SchemaAndValue
from hub.converters import _json_data
from hub.converters import _registry as reg
from hub.converters._json_schema_data import connect_schema, json_schema


class JsonSchemaConverterConfig(reg.RegistryConverterConfig):
    json_fail_invalid_schema: bool = Field(
        False, alias="json.fail.invalid.schema",
        description="Validate each value against its JSON Schema when writing.",
    )  # fmt: skip


class _Writer(NamedTuple):
    prefix: bytes
    encode: Any
    validator: Any


class _Reader(NamedTuple):
    schema: Schema
    decode: Any


class JsonSchemaConverter(reg.RegistryConverter):
    name = "json-schema"
    aliases = ("JsonSchemaConverter", "io.confluent.connect.json.JsonSchemaConverter")
    config_model = JsonSchemaConverterConfig
    config: JsonSchemaConverterConfig
    description = "JSON with a registered JSON Schema (Confluent wire format)."

    def __init__(self, config: Mapping[str, Any], is_key: bool) -> None:
        super().__init__(config, is_key)
        self._readers: dict[int, _Reader] = {}

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if schema is None:
            raise DataError("JsonSchemaConverter needs a Connect schema; the record has none")
        writer: _Writer = self._writers.get(schema, lambda: self._new_writer(topic, schema))
        node = writer.encode(value)
        if writer.validator is not None:
            problem = next(iter(writer.validator.iter_errors(node)), None)
            if problem is not None:
                raise DataError(f"value does not match its JSON Schema: {problem.message}")
        try:
            return writer.prefix + orjson.dumps(node)
        except TypeError:
            return writer.prefix + json.dumps(node, separators=(",", ":")).encode("utf-8")

    def _new_writer(self, topic: str, schema: Schema) -> _Writer:
        document = json_schema(schema)
        subject = reg.subject_name(self.strategy, topic, self.is_key, document.get("title"))
        text = json.dumps(document, separators=(",", ":"))
        client = self.client
        if self.config.use_latest_version:
            found = reg.registry_call(f"reading the latest {subject}",
                                      lambda: client.version(subject, "latest"))  # fmt: skip
            schema_id = found.id
            document = json.loads(found.schema)
        elif self.config.auto_register_schemas:
            schema_id = reg.registry_call(
                f"registering a schema under {subject}",
                lambda: client.register(subject, text, "JSON"),
            )
        else:
            found_id = reg.registry_call(f"looking up the schema under {subject}",
                                         lambda: client.lookup(subject, text, "JSON"))  # fmt: skip
            schema_id = found_id.id
        validator = None
        if self.config.json_fail_invalid_schema:
            import jsonschema

            validator = jsonschema.validators.validator_for(document)(document)
        encode = _json_data.encoder(schema, numeric_decimals=False, replace_null=True)
        return _Writer(reg.prefix(schema_id), encode, validator)

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        schema_id, payload = reg.frame(data)
        reader = self._readers.get(schema_id)
        if reader is None:
            reader = self._new_reader(schema_id)
        try:
            node = orjson.loads(payload)
        except orjson.JSONDecodeError as exc:
            raise DataError(f"payload of schema id {schema_id} is not JSON: {exc}") from None
        return SchemaAndValue(reader.schema, reader.decode(node))

    def _new_reader(self, schema_id: int) -> _Reader:
        client = self.client
        found = reg.registry_call(f"reading schema id {schema_id}",
                                  lambda: client.schema_by_id(schema_id))  # fmt: skip
        if found.schema_type != "JSON":
            raise DataError(f"schema id {schema_id} is {found.schema_type}, not JSON")
        schema = connect_schema(json.loads(found.schema))
        reader = _Reader(schema, _json_data.decoder(schema))
        if len(self._readers) >= 1000:
            self._readers.clear()
        self._readers[schema_id] = reader
        return reader
