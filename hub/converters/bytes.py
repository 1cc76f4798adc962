"""``ByteArrayConverter``: passes bytes through untouched (mirroring, opaque payloads)."""

from __future__ import annotations

from typing import Any

from hub.api import Converter, DataError, RawForm, Schema, SchemaAndValue
from hub.api.schema import OPTIONAL_BYTES_SCHEMA, Type

_BYTES_FORM = RawForm("bytes", null_safe=True)


class ByteArrayConverter(Converter):
    name = "bytes"
    aliases = ("ByteArrayConverter", "org.apache.kafka.connect.converters.ByteArrayConverter")
    description = "Raw bytes in and out; the value must already be bytes."

    def raw_form(self) -> RawForm:
        return _BYTES_FORM

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is not None and schema.type is not Type.BYTES:
            raise DataError(f"ByteArrayConverter needs a bytes schema, got {schema.type.value}")
        if value is None:
            return None
        if not isinstance(value, bytes | bytearray | memoryview):
            raise DataError(
                f"ByteArrayConverter needs bytes, got {type(value).__name__}; "
                "use the string or json converter for other values"
            )
        return bytes(value)

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_BYTES_SCHEMA, None if data is None else bytes(data))
