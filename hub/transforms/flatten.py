"""``Flatten``: nested structs (or dicts) become top-level fields joined by ``delimiter``.

With a schema, a field under an optional parent becomes optional (a null parent makes all its
children null). Arrays and maps are kept as they are, as in Kafka Connect.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import Field

from hub.api import ConfigModel, Schema
from hub.api.schema import Field as SchemaField
from hub.api.schema import Type
from hub.transforms._base import FieldTransform
from hub.transforms._util import R, copy_schema, java_aliases, require_map, require_struct


class FlattenConfig(ConfigModel):
    delimiter: str = Field(".", description="Joins the names of nested fields.")


class Flatten(FieldTransform[R]):
    name = "Flatten"
    aliases = java_aliases("Flatten")
    config_model = FlattenConfig
    description = "Flatten nested structs into top-level fields."

    def apply_schemaless(self, record: R, value: Any) -> Any:
        if value is None:
            return None
        out: dict[str, Any] = {}
        self._flatten_map(require_map(value, "flattening"), "", out)
        return out

    def _flatten_map(self, data: dict[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, item in data.items():
            name = prefix + str(key)
            if isinstance(item, dict):
                self._flatten_map(item, name + self.config.delimiter, out)
            else:
                out[name] = item

    def apply_with_schema(self, record: R, value: Any, schema: Schema) -> tuple[Schema | None, Any]:
        flat = self.schemas.get(schema, self._flat_schema)
        if value is None:
            return flat, None
        out: dict[str, Any] = {}
        self._flatten_struct(require_struct(value, schema, "flattening"), schema, "", out)
        return flat, out

    def _flatten_struct(
        self, data: dict[str, Any] | None, schema: Schema, prefix: str, out: dict[str, Any]
    ) -> None:
        for f in schema.fields:
            name = prefix + f.name
            item = None if data is None else data.get(f.name)
            if f.schema.type is Type.STRUCT:
                self._flatten_struct(item, f.schema, name + self.config.delimiter, out)
            else:
                out[name] = item

    def _flat_schema(self, schema: Schema) -> Schema:
        fields: list[SchemaField] = []
        self._collect(schema, "", False, fields)
        return copy_schema(schema, fields)

    def _collect(
        self, schema: Schema, prefix: str, optional: bool, fields: list[SchemaField]
    ) -> None:
        for f in schema.fields:
            name = prefix + f.name
            if f.schema.type is Type.STRUCT:
                nested_optional = optional or f.schema.optional
                self._collect(f.schema, name + self.config.delimiter, nested_optional, fields)
            elif optional and not f.schema.optional:
                fields.append(SchemaField(name, _as_optional(f.schema)))
            else:
                fields.append(SchemaField(name, f.schema))


def _as_optional(schema: Schema) -> Schema:
    return dataclasses.replace(schema, optional=True)
