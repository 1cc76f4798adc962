"""``HoistField``: wraps the key/value in a single-field struct (or dict when schemaless)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from hub.api import ConfigModel, Schema
from hub.api.schema import Field as SchemaField
from hub.api.schema import Type
from hub.transforms._base import FieldTransform
from hub.transforms._util import R, java_aliases


class HoistFieldConfig(ConfigModel):
    field: str = Field(min_length=1, description="Name of the field holding the old value.")


class HoistField(FieldTransform[R]):
    name = "HoistField"
    aliases = java_aliases("HoistField")
    config_model = HoistFieldConfig
    description = "Wrap the key or value in a struct with one field."

    def apply_schemaless(self, record: R, value: Any) -> Any:
        return {self.config.field: value}

    def apply_with_schema(self, record: R, value: Any, schema: Schema) -> tuple[Schema | None, Any]:
        hoisted = self.schemas.get(
            schema, lambda s: Schema(Type.STRUCT, fields=(SchemaField(self.config.field, s),))
        )
        return hoisted, {self.config.field: value}
