"""``ValueToKey``: the key becomes a struct (or dict) of some value fields, e.g. for compaction."""

from __future__ import annotations

from pydantic import Field

from hub.api import ConfigModel, DataError, Schema, Transformation
from hub.api.schema import Field as SchemaField
from hub.api.schema import Type
from hub.api.transform import Variant
from hub.transforms._util import (
    CommaList,
    R,
    SchemaCache,
    java_aliases,
    require_map,
    require_struct,
)


class ValueToKeyConfig(ConfigModel):
    fields: CommaList = Field(min_length=1, description="Value fields that make up the key.")


class ValueToKey(Transformation[R]):
    name = "ValueToKey"
    aliases = java_aliases("ValueToKey")
    config_model = ValueToKeyConfig
    description = "Replace the key with fields taken from the value."

    def __init__(self, config: ValueToKeyConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.schemas = SchemaCache()

    def apply(self, record: R) -> R | None:
        names = self.config.fields
        if record.value is None:
            return record  # a tombstone has no fields to key by; keep its key so it still deletes
        if record.value_schema is None:
            data = require_map(record.value, "copying fields from value to key")
            return record.replace(key={n: data.get(n) for n in names}, key_schema=None)
        value = require_struct(record.value, record.value_schema, "copying fields to key")
        key_schema = self.schemas.get(record.value_schema, self._key_schema)
        return record.replace(key={n: value.get(n) for n in names}, key_schema=key_schema)

    def _key_schema(self, schema: Schema) -> Schema:
        fields = []
        for name in self.config.fields:
            field = schema.field(name)
            if field is None:
                raise DataError(f"field {name!r} does not exist in the value schema")
            fields.append(SchemaField(name, field.schema))
        return Schema(Type.STRUCT, fields=tuple(fields))
