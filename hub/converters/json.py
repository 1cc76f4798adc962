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
from typing import Any, Literal, NamedTuple

import orjson
from pydantic import Field

from hub.api import (
    ConfigModel,
    Converter,
    DataError,
    HeaderConverter,
    RawForm,
    Schema,
    SchemaAndValue,
)
from hub.converters import _json_data, _passthrough

ENVELOPE_KEYS = frozenset({"schema", "payload"})
_orjson_dumps = orjson.dumps
_join = b"".join
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
_SCHEMA_START = b'{"schema":'
_PAYLOAD_SEP = b',"payload":'
_DECODER = json.JSONDecoder()
_NULL_HEAD = b'{"schema":null,"payload":'
_CACHE_SIZE = 256
_MISSING = object()


class _Writer(NamedTuple):
    schema: Schema  # held so that its id() is not reused while cached
    head: bytes  # b'{"schema":<schema json>,"payload":'
    encode: _json_data.Codec
    passthrough: _passthrough.Check | None
    orjson_safe: bool  # the generic walk's output may be written by orjson


class _Reader(NamedTuple):
    schema: Schema
    decode: _json_data.Codec
    passthrough: _passthrough.Check | None


class _JsonCodec:
    """Shared by the record and header converters: one config, two entry points.

    Speed matters (every record of a JSON topic passes here) and records of a topic share
    one schema, so both directions cache per schema: writing keeps the envelope head
    ``{"schema":<json>,"payload":`` as bytes per Schema object and splices it before the
    payload; reading keeps the parsed Schema per head bytes, so a hit only parses the
    payload. A head is cached only after a full parse confirmed that those bytes are exactly
    the schema, so a hit cannot mis-split a message; anything unusual falls back to the full
    parse.

    Payloads that are structs of ints, strings, booleans and (writing) plain floats (change
    events, most source records) take a faster path both ways: ``_passthrough`` checks that
    the value is already its own JSON form and orjson writes or reads it, with no per-field
    walk. Everything else, and every error, goes through the generic ``_json_data`` walk,
    whose output orjson writes too when the schema has no floats (else the stdlib encoder),
    so the bytes and the errors are the same either way.
    """

    def __init__(self, config: JsonConverterConfig) -> None:
        self.schemas_enable = config.schemas_enable
        self.numeric = config.decimal_format == "NUMERIC"
        self.replace_null = config.replace_null_with_default
        self._writers: dict[int, _Writer] = {}  # keyed by id(schema)
        self._readers: dict[bytes, _Reader | None] = {}  # keyed by head bytes
        self._last: tuple[bytes, Any] = (b"", None)  # head + separator of the last hit

    def _writer(self, schema: Schema) -> _Writer:
        hit = self._writers.get(id(schema))
        if hit is not None and hit.schema is schema:
            return hit
        if len(self._writers) >= _CACHE_SIZE:
            self._writers.clear()
        head = _SCHEMA_START + _ENCODER.encode(schema.to_json()).encode("utf-8") + _PAYLOAD_SEP
        enc = _json_data.encoder(
            schema, numeric_decimals=self.numeric, replace_null=self.replace_null
        )
        quick = _passthrough.checker(schema, replace_null=self.replace_null, floats=True)
        safe = not self.numeric and _passthrough.walk_output_is_orjson_safe(schema)
        entry = self._writers[id(schema)] = _Writer(schema, head, enc, quick, safe)
        return entry

    def dumps(self, schema: Schema | None, value: Any) -> bytes:
        head = _NULL_HEAD
        body = value
        if schema is not None:
            writer = self._writers.get(id(schema))  # inlined cache hit of ``_writer``
            if writer is None or writer.schema is not schema:
                writer = self._writer(schema)
            head, check = writer.head, writer.passthrough
            if check is not None and check(value):
                try:
                    data = _orjson_dumps(value)
                except orjson.JSONEncodeError:
                    pass  # e.g. a lone surrogate: the generic path raises as it always did
                else:
                    return _join((head, data, b"}")) if self.schemas_enable else data
            body = writer.encode(value)
            if writer.orjson_safe:  # e.g. rows with bytes or decimals: walked, then orjson
                try:
                    data = _orjson_dumps(body)
                except orjson.JSONEncodeError:
                    pass
                else:
                    return _join((head, data, b"}")) if self.schemas_enable else data
        try:
            text = _ENCODER.encode(body)
        except (TypeError, ValueError) as exc:
            raise DataError(f"cannot convert value to JSON: {exc}") from None
        if self.numeric and "\\u0000decimal:" in text:
            text = _NUMERIC_RE.sub(r"\1", text)
        if self.schemas_enable:
            return head + text.encode("utf-8") + b"}"
        return text.encode("utf-8")

    def loads(self, data: bytes) -> SchemaAndValue:
        data = bytes(data)
        if self.schemas_enable and self._readers:
            fast = self._loads_cached(data)
            if fast is not None:
                return fast
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"message is not UTF-8 JSON: {exc}") from None
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
            reader = _Reader(schema, _json_data.decoder(schema), _passthrough.checker(schema))
        self._remember(data, schema_node, reader)
        if reader is None:
            return SchemaAndValue(None, payload)
        return SchemaAndValue(reader.schema, reader.decode(payload))

    def _remember(self, data: bytes, schema_node: Any, reader: _Reader | None) -> None:
        end = data.find(_PAYLOAD_SEP)
        if not data.startswith(_SCHEMA_START) or end < 0:
            return
        try:
            exact = _DECODER.decode(data[len(_SCHEMA_START) : end].decode()) == schema_node
        except ValueError:
            exact = False  # the separator was inside the schema text: do not cache
        if exact:
            if len(self._readers) >= _CACHE_SIZE:
                self._readers.clear()
                self._last = (b"", None)
            self._readers[data[:end]] = reader

    def _loads_cached(self, data: bytes) -> SchemaAndValue | None:
        # Most messages carry the previous message's schema: one memcmp against its head
        # (+ separator) instead of finding the separator and hashing the head (~2 KB for a
        # change event). Sound: the cached head held no separator, not even one straddling
        # its end, so in ``data`` too the first separator follows the head.
        last_prefix, reader = self._last
        if last_prefix and data.startswith(last_prefix):
            start = len(last_prefix)
        else:
            end = data.find(_PAYLOAD_SEP)
            if end < 0:
                return None
            reader = self._readers.get(data[:end], _MISSING)
            if reader is _MISSING:
                return None
            start = end + len(_PAYLOAD_SEP)
            self._last = (data[:start], reader)
        assert reader is None or isinstance(reader, _Reader)
        if reader is not None and reader.passthrough is not None:
            stop = len(data.rstrip())  # rstrip returns ``data`` itself when nothing to strip
            if stop > start and data[stop - 1] == 125:  # '}' closing the envelope
                try:
                    payload = orjson.loads(memoryview(data)[start : stop - 1])
                except orjson.JSONDecodeError:
                    pass  # NaN, a lone surrogate, bad UTF-8, not JSON: the stdlib decides
                else:
                    # orjson reads a huge int as a float: the check rejects it, so only
                    # values the stdlib would read the same way are taken here
                    if reader.passthrough(payload):
                        return SchemaAndValue(reader.schema, payload)
        try:
            text = data.decode("utf-8")
            payload, stop = _DECODER.raw_decode(text, len(data[:start].decode("utf-8")))
        except ValueError:
            return None  # let the full parse produce the error message
        if text[stop:].strip() != "}":
            return None
        if reader is None:
            return SchemaAndValue(None, payload)
        return SchemaAndValue(reader.schema, reader.decode(payload))


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

    def raw_form(self) -> RawForm:
        """No raw form (the bytes are JSON), but a null is a null without failing."""
        return _NULL_SAFE


_NULL_SAFE = RawForm("other", null_safe=True)


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
