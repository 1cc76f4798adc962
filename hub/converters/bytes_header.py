"""``ByteArrayConverter`` as a header converter: header values are raw bytes, both ways.

Kafka's ``ByteArrayConverter`` is also a ``HeaderConverter``, and MirrorMaker 2 relies on it
(``header.converter=org.apache.kafka.connect.converters.ByteArrayConverter``): a mirrored
record's header values are opaque bytes that must reach the target unchanged. The default
``SimpleHeaderConverter`` would write bytes values as Base64 text instead.
"""

from __future__ import annotations

from typing import Any

from hub.api import DataError, HeaderConverter, Schema, SchemaAndValue
from hub.api.schema import OPTIONAL_BYTES_SCHEMA, Type


class ByteArrayHeaderConverter(HeaderConverter):
    name = "bytes"
    aliases = ("ByteArrayConverter", "org.apache.kafka.connect.converters.ByteArrayConverter")

    def from_connect(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if schema is not None and schema.type is not Type.BYTES:
            raise DataError(
                f"header {key}: ByteArrayConverter needs a bytes schema, got {schema.type.value}"
            )
        if not isinstance(value, bytes | bytearray | memoryview):
            raise DataError(
                f"header {key}: ByteArrayConverter needs bytes, got {type(value).__name__}"
            )
        return bytes(value)

    def to_connect(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_BYTES_SCHEMA, None if data is None else bytes(data))
