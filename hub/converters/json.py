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


# One encoder for all calls: json.dumps with options builds a new encoder every time.
_ENCODER = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, default=_json_data.schemaless_default
)
_SCHEMA_START = '{"schema":'
_PAYLOAD_SEP = ',"payload":'
_DECODER = json.JSONDecoder()
_NULL_HEAD = '{"schema":null,"payload":'
_CACHE_SIZE = 256


class _JsonCodec:
    """Shared by the record and header converters: one config, two entry points.

    Speed matters (every record of a JSON topic passes here) and records of a topic share
    one schema, so both directions cache per schema: writing keeps the envelope head
    ``{"schema":<json>,"payload":`` per Schema object; reading keeps the parsed Schema per
    head bytes, so a hit only parses the payload. A head is cached only after a full parse
    confirmed that those bytes are exactly the schema, so a hit cannot mis-split a message;
    anything unusual falls back to the full parse.
    """

    def __init__(self, config: JsonConverterConfig) -> None:
        self.schemas_enable = config.schemas_enable
        self.numeric = config.decimal_format == "NUMERIC"
        self.replace_null = config.replace_null_with_default
        # Keyed by id(); the entry holds the schema so its id cannot be reused while cached.
        self._writers: dict[int, tuple[Schema, str, _json_data.Codec]] = {}
        self._readers: dict[str, tuple[Schema, _json_data.Codec] | None] = {}

    def _writer(self, schema: Schema) -> tuple[Schema, str, _json_data.Codec]:
        hit = self._writers.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit
        if len(self._writers) >= _CACHE_SIZE:
            self._writers.clear()
        head = '{"schema":' + _ENCODER.encode(schema.to_json()) + ',"payload":'
        enc = _json_data.encoder(
            schema, numeric_decimals=self.numeric, replace_null=self.replace_null
        )
        entry = self._writers[id(schema)] = (schema, head, enc)
        return entry

    def dumps(self, schema: Schema | None, value: Any) -> bytes:
        head = _NULL_HEAD
        body = value
        if schema is not None:
            _, head, enc = self._writer(schema)
            body = enc(value)
        try:
            text = _ENCODER.encode(body)
        except (TypeError, ValueError) as exc:
            raise DataError(f"cannot convert value to JSON: {exc}") from None
        if self.numeric and "\\u0000decimal:" in text:
            text = _NUMERIC_RE.sub(r"\1", text)
        if self.schemas_enable:
            text = head + text + "}"
        return text.encode("utf-8")

    def loads(self, data: bytes) -> SchemaAndValue:
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"message is not UTF-8 JSON: {exc}") from None
        if self.schemas_enable and self._readers:
            fast = self._loads_cached(text)
            if fast is not None:
                return fast
        try:
            node = _DECODER.decode(text)
        except ValueError as exc:
            raise DataError(f"malformed JSON ({exc}) in message starting {text[:60]!r}") from None
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
        reader = None
        if schema_node is not None:
            try:
                schema = Schema.from_json(schema_node)
            except (KeyError, TypeError, ValueError) as exc:
                raise DataError(f"invalid schema in JSON envelope: {exc!r}") from None
            reader = (schema, _json_data.decoder(schema))
        self._remember(text, schema_node, reader)
        if reader is None:
            return SchemaAndValue(None, payload)
        return SchemaAndValue(reader[0], reader[1](payload))

    def _remember(
        self, text: str, schema_node: Any, reader: tuple[Schema, _json_data.Codec] | None
    ) -> None:
        end = text.find(_PAYLOAD_SEP)
        if not text.startswith(_SCHEMA_START) or end < 0:
            return
        try:
            exact = _DECODER.decode(text[len(_SCHEMA_START) : end]) == schema_node
        except ValueError:
            exact = False  # the separator was inside the schema text: do not cache
        if exact:
            if len(self._readers) >= _CACHE_SIZE:
                self._readers.clear()
            self._readers[text[:end]] = reader

    def _loads_cached(self, text: str) -> SchemaAndValue | None:
        end = text.find(_PAYLOAD_SEP)
        if end < 0:
            return None
        head = text[:end]
        if head not in self._readers:
            return None
        try:
            payload, stop = _DECODER.raw_decode(text, end + len(_PAYLOAD_SEP))
        except ValueError:
            return None  # let the full parse produce the error message
        if text[stop:].strip() != "}":
            return None
        reader = self._readers[head]
        if reader is None:
            return SchemaAndValue(None, payload)
        return SchemaAndValue(reader[0], reader[1](payload))


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
