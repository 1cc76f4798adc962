"""Kafka Connect's logical types in Python, and their wire encodings.

=========================  ====================  =======================================
logical type (schema name)  Python value          encoded (Connect base type)
=========================  ====================  =======================================
Timestamp                  aware ``datetime``     int64 milliseconds since the epoch (UTC)
Date                       ``date``               int32 days since 1970-01-01
Time                       ``time``               int32 milliseconds since midnight
Decimal (param ``scale``)  ``decimal.Decimal``    bytes: big-endian two's-complement
                                                  unscaled value
=========================  ====================  =======================================

Encoders also accept an already-encoded value (int for the temporal types, bytes or int for
Decimal), because data from a schemaless source often carries plain numbers.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from hub.api import DataError
from hub.api.schema import DATE, DECIMAL, TIME, TIMESTAMP, Schema, Type

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
EPOCH_DATE = dt.date(1970, 1, 1)
MS_PER_DAY = 86_400_000
LOGICAL_NAMES = frozenset({TIMESTAMP, DATE, TIME, DECIMAL})

TIMESTAMP_SCHEMA = Schema(Type.INT64, name=TIMESTAMP, version=1)
OPTIONAL_TIMESTAMP_SCHEMA = Schema(Type.INT64, optional=True, name=TIMESTAMP, version=1)
DATE_SCHEMA = Schema(Type.INT32, name=DATE, version=1)
TIME_SCHEMA = Schema(Type.INT32, name=TIME, version=1)


def decimal_schema(scale: int, optional: bool = False) -> Schema:
    return Schema(
        Type.BYTES, optional=optional, name=DECIMAL, version=1, parameters={"scale": str(scale)}
    )


def _scale(schema: Schema) -> int:
    try:
        return int((schema.parameters or {})["scale"])
    except (KeyError, ValueError):
        raise DataError("Decimal schema needs an integer 'scale' parameter") from None


def timestamp_to_millis(value: Any) -> int:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:  # naive datetimes are taken as UTC, as Connect has no zones
            value = value.replace(tzinfo=dt.UTC)
        return int((value - EPOCH) // dt.timedelta(milliseconds=1))
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DataError(f"Timestamp value must be a datetime or int, got {type(value).__name__}")


def millis_to_timestamp(millis: int) -> dt.datetime:
    try:
        return EPOCH + dt.timedelta(milliseconds=millis)
    except OverflowError:
        raise DataError(f"timestamp {millis} ms is out of range") from None


def date_to_days(value: Any) -> int:
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, dt.date):
        return (value - EPOCH_DATE).days
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DataError(f"Date value must be a date or int, got {type(value).__name__}")


def days_to_date(days: int) -> dt.date:
    try:
        return EPOCH_DATE + dt.timedelta(days=days)
    except OverflowError:
        raise DataError(f"date {days} days from the epoch is out of range") from None


def time_to_millis(value: Any) -> int:
    if isinstance(value, dt.datetime):
        value = value.time()
    if isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
            value.microsecond // 1000
        )
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DataError(f"Time value must be a time or int, got {type(value).__name__}")


def millis_to_time(millis: int) -> dt.time:
    if not 0 <= millis < MS_PER_DAY:
        raise DataError(f"Time value {millis} ms is outside one day")
    return (dt.datetime.min + dt.timedelta(milliseconds=millis)).time()


def decimal_to_bytes(value: Any, schema: Schema) -> bytes:
    """Unscaled value at the schema's scale, big-endian two's complement, minimal length."""
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    scale = _scale(schema)
    try:
        d = decimal.Decimal(value) if not isinstance(value, float) else decimal.Decimal(str(value))
    except (decimal.InvalidOperation, TypeError, ValueError):
        raise DataError(f"not a decimal: {value!r}") from None
    unscaled = d.scaleb(scale)
    if unscaled != unscaled.to_integral_value():
        raise DataError(f"{value} has more than {scale} decimal places")
    n = int(unscaled)
    length = max(1, (n + (n < 0)).bit_length() // 8 + 1)
    return n.to_bytes(length, "big", signed=True)


def bytes_to_decimal(data: bytes, schema: Schema) -> decimal.Decimal:
    unscaled = int.from_bytes(data, "big", signed=True)
    return decimal.Decimal(unscaled).scaleb(-_scale(schema))


def to_wire(schema: Schema, value: Any) -> Any:
    """Encodes a logical value to its base type (no-op for non-logical schemas)."""
    if value is None or schema.name not in LOGICAL_NAMES:
        return value
    if schema.name == TIMESTAMP:
        return timestamp_to_millis(value)
    if schema.name == DATE:
        return date_to_days(value)
    if schema.name == TIME:
        return time_to_millis(value)
    return decimal_to_bytes(value, schema)


def from_wire(schema: Schema, value: Any) -> Any:
    """Decodes a base-type value to its logical Python form (no-op for non-logical schemas)."""
    if value is None or schema.name not in LOGICAL_NAMES:
        return value
    if schema.name == TIMESTAMP:
        return millis_to_timestamp(int(value))
    if schema.name == DATE:
        return days_to_date(int(value))
    if schema.name == TIME:
        return millis_to_time(int(value))
    return bytes_to_decimal(value, schema)
