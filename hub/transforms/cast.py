"""``Cast``: changes the type of fields (or of the whole key/value) to a primitive type.

``spec`` is ``field:type,...`` or a single ``type`` for the whole value. Types: int8, int16,
int32, int64, float32, float64, boolean, string. Integer casts wrap around like Java's
narrowing casts; strings parse; booleans become 1/0; logical values (Timestamp, Date, Time)
cast to numbers as their encoded form; bytes cast to string as base64.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from typing import Any

from pydantic import Field, field_validator

from hub.api import ConfigModel, DataError, Schema
from hub.api.schema import Field as SchemaField
from hub.api.schema import Type
from hub.api.transform import Variant
from hub.converters import _json_data, logical
from hub.transforms._base import FieldTransform
from hub.transforms._util import (
    CommaList,
    R,
    copy_schema,
    java_aliases,
    require_map,
    require_struct,
)

TARGETS: dict[str, Type] = {
    "int8": Type.INT8,
    "int16": Type.INT16,
    "int32": Type.INT32,
    "int64": Type.INT64,
    "float32": Type.FLOAT32,
    "float64": Type.FLOAT64,
    "boolean": Type.BOOLEAN,
    "string": Type.STRING,
}
_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
WHOLE = ""  # spec key meaning "the whole value"


def parse_spec(items: list[str]) -> dict[str, Type]:
    if len(items) == 1 and ":" not in items[0]:
        items = [f":{items[0]}"]
    out: dict[str, Type] = {}
    for item in items:
        name, sep, type_name = item.rpartition(":")
        name, type_name = name.strip(), type_name.strip().lower()
        if not sep or (not name and len(items) > 1):
            raise ValueError(f"{item!r}: expected field:type")
        if type_name not in TARGETS:
            raise ValueError(f"{item!r}: type must be one of {', '.join(TARGETS)}")
        out[name] = TARGETS[type_name]
    return out


class CastConfig(ConfigModel):
    spec: CommaList = Field(
        min_length=1, description="field:type pairs, or one type for the whole value."
    )

    @field_validator("spec")
    @classmethod
    def _valid_spec(cls, value: list[str]) -> list[str]:
        parse_spec(value)
        return value


def _to_int(value: Any, kind: Type) -> int:
    if isinstance(value, int | float | decimal.Decimal):  # bool is an int: True -> 1
        n = int(value)
    elif isinstance(value, str):
        try:
            n = int(value.strip())
        except ValueError:
            n = int(float(value.strip()))
    elif isinstance(value, dt.datetime):
        n = logical.timestamp_to_millis(value)
    elif isinstance(value, dt.date):
        n = logical.date_to_days(value)
    elif isinstance(value, dt.time):
        n = logical.time_to_millis(value)
    else:
        raise TypeError
    bits = _BITS[kind]
    return ((n + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))


def _to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), default=_json_data.schemaless_default)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)


def cast_value(value: Any, kind: Type) -> Any:
    """``value`` as a ``kind`` value; DataError if it cannot be."""
    if value is None:
        return None
    try:
        if kind in _BITS:
            return _to_int(value, kind)
        if kind in (Type.FLOAT32, Type.FLOAT64):
            if isinstance(value, dt.datetime | dt.date | dt.time):
                return float(_to_int(value, Type.INT64))
            return float(value)
        if kind is Type.BOOLEAN:
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered not in ("true", "false"):
                    raise ValueError
                return lowered == "true"
            if isinstance(value, bool | int | float | decimal.Decimal):
                return bool(value)
            raise TypeError
        return _to_string(value)
    except (TypeError, ValueError, OverflowError, decimal.InvalidOperation):
        raise DataError(f"cannot cast {value!r} to {kind.value}") from None


class Cast(FieldTransform[R]):
    name = "Cast"
    aliases = java_aliases("Cast")
    config_model = CastConfig
    description = "Cast fields or the whole key/value to another primitive type."

    def __init__(self, config: CastConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.casts = parse_spec(config.spec)
        self.whole = self.casts.get(WHOLE)

    def apply_schemaless(self, record: R, value: Any) -> Any:
        if self.whole is not None:
            return cast_value(value, self.whole)
        if value is None:
            return None
        data = require_map(value, "cast types")
        return {k: cast_value(v, self.casts[k]) if k in self.casts else v for k, v in data.items()}

    def apply_with_schema(self, record: R, value: Any, schema: Schema) -> tuple[Schema | None, Any]:
        new_schema = self.schemas.get(schema, self._cast_schema)
        if self.whole is not None:
            return new_schema, cast_value(value, self.whole)
        if value is None:
            return new_schema, None
        data = require_struct(value, schema, "cast types")
        out = {k: cast_value(v, self.casts[k]) if k in self.casts else v for k, v in data.items()}
        return new_schema, out

    def _cast_schema(self, schema: Schema) -> Schema:
        if self.whole is not None:
            return _primitive(schema, self.whole)
        if schema.type is not Type.STRUCT:
            raise DataError(f"field casts need a struct schema, found {schema.type.value}")
        fields = [
            SchemaField(f.name, _primitive(f.schema, self.casts[f.name]))
            if f.name in self.casts
            else f
            for f in schema.fields
        ]
        return copy_schema(schema, fields)


def _primitive(schema: Schema, kind: Type) -> Schema:
    default = cast_value(schema.default, kind) if schema.default is not None else None
    return Schema(kind, optional=schema.optional, default=default)
