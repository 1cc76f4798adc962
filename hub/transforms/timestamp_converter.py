"""``TimestampConverter``: converts timestamps between strings, unix numbers and logical types.

Every input is first read as a UTC ``datetime`` then written as ``target.type``:

=========  ===================================  =============================
type       Python value                         schema
=========  ===================================  =============================
string     text in ``format`` (Java pattern)    string
unix       int in ``unix.precision`` units      int64
Timestamp  aware datetime                       Timestamp logical (int64)
Date       date (time of day dropped)           Date logical (int32)
Time       time (date dropped)                  Time logical (int32)
=========  ===================================  =============================

The input type comes from the schema when there is one, else from the Python value (strings
need ``format``). ``field`` empty converts the whole key/value.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from hub.api import ConfigModel, DataError, Schema
from hub.api.schema import DATE, TIME, TIMESTAMP, Type
from hub.api.schema import Field as SchemaField
from hub.api.transform import Variant
from hub.converters import logical
from hub.transforms._base import FieldTransform
from hub.transforms._java_time import JavaDateFormat, compile_pattern
from hub.transforms._util import R, copy_schema, java_aliases, require_map, require_struct

Target = Literal["string", "unix", "Date", "Time", "Timestamp"]
_UNITS = {"seconds": 1, "milliseconds": 1_000, "microseconds": 1_000_000, "nanoseconds": 10**9}
_TARGET_SCHEMAS: dict[str, Schema] = {
    "string": Schema(Type.STRING),
    "unix": Schema(Type.INT64),
    "Date": logical.DATE_SCHEMA,
    "Time": logical.TIME_SCHEMA,
    "Timestamp": logical.TIMESTAMP_SCHEMA,
}


class TimestampConverterConfig(ConfigModel):
    field: str = Field("", description="Field to convert; empty converts the whole value.")
    target_type: Target = Field(alias="target.type", description="The type to convert to.")
    format: str | None = Field(
        None, description="Java SimpleDateFormat pattern for string input or output."
    )
    unix_precision: Literal["seconds", "milliseconds", "microseconds", "nanoseconds"] = Field(
        "milliseconds", alias="unix.precision", description="Unit of unix timestamps."
    )

    @field_validator("format")
    @classmethod
    def _valid_pattern(cls, value: str | None) -> str | None:
        if value:
            compile_pattern(value)
        return value or None

    @model_validator(mode="after")
    def _format_for_strings(self) -> TimestampConverterConfig:
        if self.target_type == "string" and not self.format:
            raise ValueError("'format' is required when target.type is string")
        return self


class TimestampConverter(FieldTransform[R]):
    name = "TimestampConverter"
    aliases = java_aliases("TimestampConverter")
    config_model = TimestampConverterConfig
    description = "Convert timestamps between string, unix and Connect's logical types."

    def __init__(self, config: TimestampConverterConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.unit = _UNITS[config.unix_precision]
        self.formatter: JavaDateFormat | None = (
            compile_pattern(config.format) if config.format else None
        )

    # -- reading and writing one value ---------------------------------------------------

    def to_datetime(self, value: Any, schema: Schema | None) -> dt.datetime:
        name = schema.name if schema is not None else None
        if isinstance(value, dt.datetime):
            return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
        if isinstance(value, dt.time):
            return dt.datetime.combine(logical.EPOCH_DATE, value, tzinfo=dt.UTC)
        if isinstance(value, int) and not isinstance(value, bool):
            if name == DATE:
                return self.to_datetime(logical.days_to_date(value), None)
            if name in (TIME, TIMESTAMP):
                return logical.millis_to_timestamp(value)
            try:
                return logical.EPOCH + dt.timedelta(microseconds=value * 1_000_000 // self.unit)
            except OverflowError:
                raise DataError(
                    f"unix timestamp {value} ({self.config.unix_precision}) is out of range"
                ) from None
        if isinstance(value, str):
            if self.formatter is None:
                raise DataError("string timestamps need the 'format' setting")
            try:
                return self.formatter.parse(value)
            except ValueError:
                raise DataError(
                    f"{value!r} does not match the format {self.formatter.pattern!r}"
                ) from None
        raise DataError(f"cannot read a timestamp from a {type(value).__name__} value")

    def from_datetime(self, stamp: dt.datetime) -> Any:
        target = self.config.target_type
        if target == "string":
            assert self.formatter is not None
            return self.formatter.format(stamp)
        if target == "unix":
            return (stamp - logical.EPOCH) // dt.timedelta(microseconds=1) * self.unit // 10**6
        if target == "Date":
            return stamp.date()
        if target == "Time":
            return stamp.time()
        return stamp

    def convert(self, value: Any, schema: Schema | None) -> Any:
        return None if value is None else self.from_datetime(self.to_datetime(value, schema))

    def _target_schema(self, optional: bool) -> Schema:
        base = _TARGET_SCHEMAS[self.config.target_type]
        return Schema(base.type, optional=optional, name=base.name, version=base.version)

    # -- the two paths ---------------------------------------------------------------------

    def apply_schemaless(self, record: R, value: Any) -> Any:
        if not self.config.field:
            return self.convert(value, None)
        if value is None:
            return None
        data = require_map(value, "converting timestamp formats")
        return {**data, self.config.field: self.convert(data.get(self.config.field), None)}

    def apply_with_schema(self, record: R, value: Any, schema: Schema) -> tuple[Schema | None, Any]:
        name = self.config.field
        if not name:
            return self._target_schema(schema.optional), self.convert(value, schema)
        field = schema.field(name)
        if field is None:
            raise DataError(f"field {name!r} does not exist in the {self.variant} schema")
        new_schema = self.schemas.get(schema, self._struct_schema)
        if value is None:
            return new_schema, None
        data = require_struct(value, schema, "converting timestamp formats")
        return new_schema, {**data, name: self.convert(data.get(name), field.schema)}

    def _struct_schema(self, schema: Schema) -> Schema:
        fields = [
            SchemaField(f.name, self._target_schema(f.schema.optional))
            if f.name == self.config.field
            else f
            for f in schema.fields
        ]
        return copy_schema(schema, fields)
