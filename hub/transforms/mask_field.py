"""``MaskField``: replaces field values with an empty value of their type, or a replacement.

Without ``replacement`` a field becomes its type's "zero": 0, 0.0, false, "", b"", the epoch
for temporal types, empty list/dict. A ``replacement`` applies to numeric and string fields
and is parsed to the field's type; other types cannot take one (DataError).
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from pydantic import Field

from hub.api import ConfigModel, DataError, Schema
from hub.api.schema import DATE, DECIMAL, TIME, TIMESTAMP, Type
from hub.api.transform import Variant
from hub.converters.logical import EPOCH
from hub.transforms._base import FieldTransform
from hub.transforms._util import CommaList, R, java_aliases, require_map, require_struct

_SCHEMA_EMPTY: dict[Type, Any] = {
    Type.INT8: 0,
    Type.INT16: 0,
    Type.INT32: 0,
    Type.INT64: 0,
    Type.FLOAT32: 0.0,
    Type.FLOAT64: 0.0,
    Type.BOOLEAN: False,
    Type.STRING: "",
    Type.BYTES: b"",
}
_LOGICAL_EMPTY: dict[str, Any] = {
    TIMESTAMP: EPOCH,
    DATE: EPOCH.date(),
    TIME: dt.time(0),
    DECIMAL: decimal.Decimal(0),
}


class MaskFieldConfig(ConfigModel):
    fields: CommaList = Field(min_length=1, description="Fields to mask.")
    replacement: str | None = Field(
        None, description="Replacement for numeric/string fields instead of an empty value."
    )


def _empty_like(value: Any) -> Any:
    if isinstance(value, bool):
        return False
    for kind in (int, float, str, bytes, list, dict):
        if isinstance(value, kind):
            return kind()
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal(0)
    if isinstance(value, dt.datetime):
        return EPOCH
    if isinstance(value, dt.date):
        return EPOCH.date()
    if isinstance(value, dt.time):
        return dt.time(0)
    raise DataError(f"cannot mask a {type(value).__name__} value")


def _replace_like(value: Any, replacement: str) -> Any:
    parse: Any = None
    if isinstance(value, str):
        return replacement
    if isinstance(value, int) and not isinstance(value, bool):
        parse = int
    elif isinstance(value, float | decimal.Decimal):
        parse = type(value)
    if parse is None:
        raise DataError(f"cannot mask a {type(value).__name__} value with a custom replacement")
    try:
        return parse(replacement)
    except (ValueError, decimal.InvalidOperation):
        raise DataError(
            f"replacement {replacement!r} is not a valid {type(value).__name__}"
        ) from None


class MaskField(FieldTransform[R]):
    name = "MaskField"
    aliases = java_aliases("MaskField")
    config_model = MaskFieldConfig
    description = "Mask fields with an empty value or a replacement."

    def __init__(self, config: MaskFieldConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.masked = frozenset(config.fields)

    def _mask(self, value: Any, schema: Schema | None) -> Any:
        if value is None:
            return None
        if schema is not None and self.config.replacement is None:
            if schema.name in _LOGICAL_EMPTY:
                return _LOGICAL_EMPTY[schema.name]
            if schema.type in _SCHEMA_EMPTY:
                return _SCHEMA_EMPTY[schema.type]
        if self.config.replacement is not None:
            return _replace_like(value, self.config.replacement)
        return _empty_like(value)

    def apply_schemaless(self, record: R, value: Any) -> Any:
        if value is None:
            return None
        data = require_map(value, "masking")
        return {k: self._mask(v, None) if k in self.masked else v for k, v in data.items()}

    def apply_with_schema(self, record: R, value: Any, schema: Schema) -> tuple[Schema | None, Any]:
        if value is None:
            return schema, None
        data = require_struct(value, schema, "masking")
        out = dict(data)
        for name in self.masked:
            field = schema.field(name)
            if field is None:
                raise DataError(f"field {name!r} does not exist in the {self.variant} schema")
            out[name] = self._mask(data.get(name), field.schema)
        return schema, out
