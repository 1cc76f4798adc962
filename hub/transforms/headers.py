"""Header transforms: ``DropHeaders``, ``InsertHeader``, ``HeaderFrom``."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from hub.api import ConfigModel, DataError, Header, Schema, Transformation
from hub.api.transform import Variant
from hub.converters.values import parse_string
from hub.transforms._util import (
    CommaList,
    R,
    SchemaCache,
    copy_schema,
    java_aliases,
    operating,
    require_map,
    require_struct,
    updated,
)


class DropHeadersConfig(ConfigModel):
    headers: CommaList = Field(min_length=1, description="Header names to remove.")


class DropHeaders(Transformation[R]):
    name = "DropHeaders"
    aliases = java_aliases("DropHeaders")
    config_model = DropHeadersConfig
    description = "Remove headers by name."

    def __init__(self, config: DropHeadersConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.names = frozenset(config.headers)

    def apply(self, record: R) -> R | None:
        kept = tuple(h for h in record.headers if h.key not in self.names)
        return record if len(kept) == len(record.headers) else record.replace(headers=kept)


class InsertHeaderConfig(ConfigModel):
    header: str = Field(min_length=1, description="Name of the header to add.")
    value_literal: str = Field(
        alias="value.literal", description="Header value; its type is guessed (42 -> int8)."
    )


class InsertHeader(Transformation[R]):
    name = "InsertHeader"
    aliases = java_aliases("InsertHeader")
    config_model = InsertHeaderConfig
    description = "Add a header with a literal value."

    def __init__(self, config: InsertHeaderConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.parsed = parse_string(config.value_literal)

    def apply(self, record: R) -> R | None:
        return record.with_header(self.config.header, self.parsed.value, self.parsed.schema)


class HeaderFromConfig(ConfigModel):
    fields: CommaList = Field(min_length=1, description="Fields to copy or move to headers.")
    headers: CommaList = Field(min_length=1, description="Header names, one per field.")
    operation: Literal["move", "copy"] = Field(description="move or copy the fields.")

    @model_validator(mode="after")
    def _same_length(self) -> HeaderFromConfig:
        if len(self.fields) != len(self.headers):
            raise ValueError("'fields' and 'headers' must list the same number of names")
        return self


class HeaderFrom(Transformation[R]):
    """Copies (or moves) fields of the key/value into headers, keeping their schemas."""

    name = "HeaderFrom"
    aliases = java_aliases("HeaderFrom")
    config_model = HeaderFromConfig
    variants: ClassVar[tuple[Variant, ...]] = ("key", "value")
    description = "Copy or move key/value fields into headers."

    def __init__(self, config: HeaderFromConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant or "value")
        self.pairs = list(zip(config.fields, config.headers, strict=True))
        self.moved = frozenset(config.fields) if config.operation == "move" else frozenset()
        self.schemas = SchemaCache()

    def apply(self, record: R) -> R | None:
        value, schema = operating(record, self.variant)
        if value is None:
            return record
        if schema is None:
            data = require_map(value, "header from")
            headers = [Header(h, data.get(f)) for f, h in self.pairs]
        else:
            data = require_struct(value, schema, "header from")
            headers = [Header(h, data.get(f), self._field_schema(schema, f)) for f, h in self.pairs]
        record = record.replace(headers=(*record.headers, *headers))
        if not self.moved:
            return record
        new_value = {k: v for k, v in data.items() if k not in self.moved}
        new_schema = None if schema is None else self.schemas.get(schema, self._moved_schema)
        return updated(record, self.variant, new_value, new_schema)

    def _field_schema(self, schema: Schema, name: str) -> Schema:
        field = schema.field(name)
        if field is None:
            raise DataError(f"field {name!r} is not in the {self.variant} schema")
        return field.schema

    def _moved_schema(self, schema: Schema) -> Schema:
        return copy_schema(schema, [f for f in schema.fields if f.name not in self.moved])
