"""JSON converters, wire-compatible with Kafka Connect's ``JsonConverter``.

With ``schemas.enable=true`` (the default, as in Kafka Connect) every message is an envelope
``{"schema": <Connect schema JSON or null>, "payload": <value>}``; with ``false`` the message is
the bare value and reading yields no schema: nothing is inferred from the JSON, so a number
stays whatever ``json.loads`` made of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from hub.api import ConfigModel, Converter, DataError, HeaderConverter, Schema, SchemaAndValue
from hub.converters import _json_data

ENVELOPE_KEYS = frozenset({"schema", "payload"})
_NUMERIC_RE = re.compile(r'"\\u0000decimal:([-0-9.Ee+]+)"')


class JsonConverterConfig(ConfigModel):
    schemas_enable: bool = Field(
        True,
        alias="schemas.enable",
        description="Wrap each message in a {schema, payload} envelope and read it back.",
    )
    decimal_format: Literal["BASE64", "NUMERIC"] = Field(
        "BASE64",
        alias="decimal.format",
        description="How Decimal values are written: base64 of the unscaled bytes, or a number.",
    )
    replace_null_with_default: bool = Field(
        True,
        alias="replace.null.with.default",
        description="Write a field's schema default instead of null.",
    )
    schemas_cache_size: int = Field(
        1000, alias="schemas.cache.size", ge=0, description="Accepted for compatibility."
    )


class _JsonCodec:
    """Shared by the record and header converters: one config, two entry points."""

    def __init__(self, config: JsonConverterConfig) -> None:
        self.schemas_enable = config.schemas_enable
        self.numeric = config.decimal_format == "NUMERIC"
        self.replace_null = config.replace_null_with_default
        # Most records of a topic share one Schema object: remember its JSON form by identity
        # (the entry holds the schema, so its id cannot be reused while cached).
        self._schema_json: dict[int, tuple[Schema, dict[str, Any]]] = {}

    def _schema_to_json(self, schema: Schema) -> dict[str, Any]:
        hit = self._schema_json.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        if len(self._schema_json) >= 256:
            self._schema_json.clear()
        out = schema.to_json()
        self._schema_json[id(schema)] = (schema, out)
        return out

    def dumps(self, schema: Schema | None, value: Any) -> bytes:
        if schema is None:
            body = value
        else:
            body = _json_data.encode(
                schema, value, numeric_decimals=self.numeric, replace_null=self.replace_null
            )
        if self.schemas_enable:
            body = {
                "schema": None if schema is None else self._schema_to_json(schema),
                "payload": body,
            }
        try:
            text = json.dumps(
                body,
                separators=(",", ":"),
                ensure_ascii=False,
                default=_json_data.schemaless_default,
            )
        except (TypeError, ValueError) as exc:
            raise DataError(f"cannot convert value to JSON: {exc}") from None
        if self.numeric and "\\u0000decimal:" in text:
            text = _NUMERIC_RE.sub(r"\1", text)
        return text.encode("utf-8")

    def loads(self, data: bytes) -> SchemaAndValue:
        try:
            node = json.loads(data)
        except (UnicodeDecodeError, ValueError) as exc:
            snippet = bytes(data[:60]).decode("utf-8", "replace")
            raise DataError(f"malformed JSON ({exc}) in message starting {snippet!r}") from None
        if not self.schemas_enable or node is None:
            # a JSON null is a null whatever the mode: nothing to unwrap
            return SchemaAndValue(None, node)
        if not isinstance(node, dict) or set(node) != ENVELOPE_KEYS:
            raise DataError(
                "with schemas.enable=true a JSON message must be an object with exactly the "
                'fields "schema" and "payload"; for plain JSON set schemas.enable=false on '
                "this converter (e.g. value.converter.schemas.enable=false)"
            )
        schema_node, payload = node["schema"], node["payload"]
        if schema_node is None:
            return SchemaAndValue(None, payload)
        try:
            schema = Schema.from_json(schema_node)
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"invalid schema in JSON envelope: {exc!r}") from None
        return SchemaAndValue(schema, _json_data.decode(schema, payload))


class JsonConverter(Converter):
    """JSON with or without Kafka Connect's schema envelope."""

    name = "json"
    aliases = ("JsonConverter", "org.apache.kafka.connect.json.JsonConverter")
    config_model = JsonConverterConfig
    config: JsonConverterConfig
    description = "JSON, optionally in Kafka Connect's {schema, payload} envelope."

    def __init__(self, config: Mapping[str, Any], is_key: bool) -> None:
        super().__init__(config, is_key)
        self.codec = _JsonCodec(self.config)

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None and value is None:
            return None  # a tombstone stays a tombstone
        return self.codec.dumps(schema, value)

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        return self.codec.loads(data)


class JsonHeaderConverter(HeaderConverter):
    """Header values as JSON, envelope included unless ``schemas.enable=false``."""

    name = "json"
    aliases = ("JsonConverter", "org.apache.kafka.connect.json.JsonConverter")
    config_model = JsonConverterConfig
    config: JsonConverterConfig

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__(config)
        self.codec = _JsonCodec(self.config)

    def from_connect(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None and value is None:
            return None
        return self.codec.dumps(schema, value)

    def to_connect(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        return self.codec.loads(data)
