"""``SimpleHeaderConverter``: header values as plain text, types guessed back on read.

Kafka Connect's default header converter: what a human or a non-Connect producer puts in a
header (``"42"``, ``"true"``, ``"us-east"``) reads back as the obvious typed value.
"""

from __future__ import annotations

from typing import Any

from hub.api import HeaderConverter, HeaderRawForm, Schema, SchemaAndValue
from hub.api.schema import STRING_SCHEMA
from hub.converters.values import parse_string, to_string

_TEXT = HeaderRawForm(text=True)
_TEXT_WITH_INTEGERS = HeaderRawForm(text=True, integers=True)


class SimpleHeaderConverter(HeaderConverter):
    name = "simple"
    aliases = ("SimpleHeaderConverter", "org.apache.kafka.connect.storage.SimpleHeaderConverter")

    def raw_form(self) -> HeaderRawForm:
        """Text out (``to_string``), a pure read back that parses integers as ``parse_string``
        does (the narrowest integer type) and never fails (undecodable bytes are replaced)."""
        return _TEXT_WITH_INTEGERS

    def from_connect(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        return to_string(value).encode("utf-8")

    def to_connect(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        text = bytes(data).decode("utf-8", "replace")
        if not text:
            return SchemaAndValue(STRING_SCHEMA, text)
        return parse_string(text)


class StringHeaderConverter(HeaderConverter):
    """Header values as text without type guessing (``StringConverter`` as a header converter)."""

    name = "string"
    aliases = ("StringConverter", "org.apache.kafka.connect.storage.StringConverter")

    def raw_form(self) -> HeaderRawForm:
        return _TEXT

    def from_connect(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        return None if value is None else to_string(value).encode("utf-8")

    def to_connect(self, topic: str, key: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        return SchemaAndValue(STRING_SCHEMA, bytes(data).decode("utf-8", "replace"))
