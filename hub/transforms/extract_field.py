"""``ExtractField``: replaces the key/value with one of its fields.

``field.syntax.version=V2`` lets ``field`` be a dotted path into nested structs/maps
(``after.id``); the default V1 treats the whole string as one field name, as Kafka Connect does.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hub.api import ConfigModel, DataError, Schema
from hub.api.transform import Variant
from hub.transforms._base import FieldTransform
from hub.transforms._util import R, java_aliases, require_map, require_struct


class ExtractFieldConfig(ConfigModel):
    field: str = Field(min_length=1, description="Field to extract.")
    field_syntax_version: Literal["V1", "V2"] = Field(
        "V1", alias="field.syntax.version", description="V2: dotted paths into nested fields."
    )


class ExtractField(FieldTransform[R]):
    name = "ExtractField"
    aliases = java_aliases("ExtractField")
    config_model = ExtractFieldConfig
    description = "Replace the key or value with one of its fields."

    def __init__(self, config: ExtractFieldConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        nested = config.field_syntax_version == "V2"
        self.path = config.field.split(".") if nested else [config.field]

    def apply_schemaless(self, record: R, value: Any) -> Any:
        for name in self.path:
            if value is None:
                return None
            value = require_map(value, "field extraction").get(name)
        return value

    def apply_with_schema(self, record: R, value: Any, schema: Schema) -> tuple[Schema | None, Any]:
        for name in self.path:
            field = schema.field(name)
            if field is None:
                raise DataError(f"unknown field {name!r} in the {self.variant} schema")
            value = None if value is None else require_struct(value, schema, "field extraction")
            value = None if value is None else value.get(name)
            schema = field.schema
        return schema, value
