"""``StringConverter``: values as text, for plain-text topics and string keys.

Writing turns any value into ``str(value)``; reading gives an optional string schema, as Kafka
Connect's StringConverter does, so downstream transforms know the type.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices, Field, field_validator

from hub.api import ConfigModel, Converter, DataError, RawForm, Schema, SchemaAndValue
from hub.api.schema import OPTIONAL_STRING_SCHEMA


class StringConverterConfig(ConfigModel):
    encoding: str = Field(
        "UTF-8",
        validation_alias=AliasChoices("converter.encoding", "encoding"),
        serialization_alias="converter.encoding",
        description="Character set for reading and writing (Java or Python codec names).",
    )

    @field_validator("encoding")
    @classmethod
    def _known_codec(cls, value: str) -> str:
        try:
            codecs.lookup(value)
        except LookupError:
            raise ValueError(f"unknown encoding {value!r}") from None
        return value


class StringConverter(Converter):
    name = "string"
    aliases = ("StringConverter", "org.apache.kafka.connect.storage.StringConverter")
    config_model = StringConverterConfig
    config: StringConverterConfig
    description = "Values as text in a configurable encoding (converter.encoding)."

    def __init__(self, config: Mapping[str, Any], is_key: bool) -> None:
        super().__init__(config, is_key)
        self.encoding: str = self.config.encoding
        self._form = RawForm("text", codecs.lookup(self.encoding).name, null_safe=True)

    def raw_form(self) -> RawForm:
        """Text in ``converter.encoding``: ``to_connect``/``from_connect`` below are exactly
        that form's decode and encode (bytes values pass as they are)."""
        return self._form

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, bytes | bytearray):
            return bytes(value)  # already text bytes; re-encoding would write "b'...'"
        try:
            return str(value).encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise DataError(f"cannot encode value as {self.encoding}: {exc}") from None

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, None)
        try:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, bytes(data).decode(self.encoding))
        except UnicodeDecodeError as exc:
            raise DataError(f"message is not valid {self.encoding}: {exc}") from None
