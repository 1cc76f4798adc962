"""``InsertField``: adds record metadata (topic, partition, offset, timestamp) or a constant.

Each ``*.field`` setting names the new field; a ``!`` suffix makes it required in the new
schema, ``?`` (the default) optional. ``offset.field`` only applies to sink records. A null
key/value (a tombstone) passes through untouched so deletes still propagate.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from hub.api import ConfigModel, DataError, Schema, SinkRecord
from hub.api.schema import INT32_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, Type
from hub.api.schema import Field as SchemaField
from hub.api.transform import Variant
from hub.converters.logical import TIMESTAMP_SCHEMA, millis_to_timestamp
from hub.transforms._base import FieldTransform
from hub.transforms._util import R, copy_schema, java_aliases, require_map, require_struct

_SCHEMAS = {
    "topic": STRING_SCHEMA,
    "partition": INT32_SCHEMA,
    "offset": INT64_SCHEMA,
    "timestamp": TIMESTAMP_SCHEMA,
    "static": STRING_SCHEMA,
}


class InsertFieldConfig(ConfigModel):
    topic_field: str | None = Field(None, alias="topic.field", description="Field for the topic.")
    partition_field: str | None = Field(
        None, alias="partition.field", description="Field for the partition."
    )
    offset_field: str | None = Field(
        None, alias="offset.field", description="Field for the Kafka offset (sink records)."
    )
    timestamp_field: str | None = Field(
        None, alias="timestamp.field", description="Field for the record timestamp."
    )
    static_field: str | None = Field(
        None, alias="static.field", description="Field for the static value."
    )
    static_value: str | None = Field(
        None, alias="static.value", description="Value of the static field."
    )


def _spec(raw: str | None) -> tuple[str, bool] | None:
    """(name, optional) from ``name``, ``name?`` or ``name!``."""
    if raw is None or not raw.strip():
        return None
    raw = raw.strip()
    if raw.endswith(("!", "?")):
        return raw[:-1], raw.endswith("?")
    return raw, True


class InsertField(FieldTransform[R]):
    name = "InsertField"
    aliases = java_aliases("InsertField")
    config_model = InsertFieldConfig
    description = "Insert topic, partition, offset, timestamp or a static value as fields."

    def __init__(self, config: InsertFieldConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.specs: dict[str, tuple[str, bool]] = {}
        for kind in _SCHEMAS:
            spec = _spec(getattr(config, f"{kind}_field"))
            if spec is not None:
                self.specs[kind] = spec

    def apply(self, record: R) -> R | None:
        value = record.key if self.variant == "key" else record.value
        if value is None:
            return record
        return super().apply(record)

    def _values(self, record: R, with_schema: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind, (name, _) in self.specs.items():
            if kind == "topic":
                out[name] = record.topic
            elif kind == "partition":
                out[name] = record.partition
            elif kind == "offset":
                if not isinstance(record, SinkRecord):
                    raise DataError("offset.field applies only to sink records (with an offset)")
                out[name] = record.offset
            elif kind == "timestamp":
                ts = record.timestamp
                out[name] = millis_to_timestamp(ts) if with_schema and ts is not None else ts
            else:
                out[name] = self.config.static_value
        return out

    def apply_schemaless(self, record: R, value: Any) -> Any:
        return {**require_map(value, "field insertion"), **self._values(record, False)}

    def apply_with_schema(self, record: R, value: Any, schema: Schema) -> tuple[Schema | None, Any]:
        data = require_struct(value, schema, "field insertion")
        new_schema = self.schemas.get(schema, self._schema)
        return new_schema, {**data, **self._values(record, True)}

    def _schema(self, schema: Schema) -> Schema:
        if schema.type is not Type.STRUCT:
            raise DataError("field insertion needs a struct schema")
        fields = list(schema.fields)
        for kind, (name, optional) in self.specs.items():
            base = _SCHEMAS[kind]
            fields.append(
                SchemaField(
                    name,
                    Schema(base.type, optional=optional, name=base.name, version=base.version),
                )
            )
        return copy_schema(schema, fields)
