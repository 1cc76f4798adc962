"""Column types from Kafka Connect schemas (or from plain values), and value adapters.

Connect schema -> SQL column (SQLAlchemy types, so every dialect renders its own spelling):

=============================================  ==========================================
int8/int16, int32, int64                        SMALLINT, INTEGER, BIGINT
float32, float64, boolean                       REAL, DOUBLE, BOOLEAN
string, bytes                                   TEXT, BLOB/BYTEA
Decimal (scale param)                           NUMERIC(precision from ``connect.decimal.
                                                precision`` or 38, scale)
Date / Time / Timestamp                         DATE / TIME / TIMESTAMP
Debezium io.debezium.time.Date                  DATE (days since epoch converted)
Debezium Timestamp/MicroTimestamp/NanoTimestamp TIMESTAMP (ms/us/ns converted)
Debezium Time/MicroTime/NanoTime                TIME
Debezium ZonedTimestamp (ISO string)            TIMESTAMP WITH TIME ZONE
Debezium VariableScaleDecimal {scale, value}    NUMERIC
array, map, struct                              TEXT holding the value as JSON
=============================================  ==========================================

Schemaless values (dicts from the JSON converter with schemas off) are typed by their Python
type the first time a column is seen: bool BOOLEAN, int BIGINT, float DOUBLE, str TEXT, bytes
BLOB, Decimal NUMERIC, datetime TIMESTAMP, date DATE, dict/list TEXT (JSON); a column first
seen as null becomes TEXT. Later values are written as they are and the database decides
whether they fit (a mismatch makes that record a DataError).

Adapters are built once per (schema, column), so the per-row cost is one call only for the
columns that need converting; most columns need none.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from hub.api import Schema, Type
from hub.api.schema import DATE, DECIMAL, TIME, TIMESTAMP

Adapter = Callable[[Any], Any]
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)

_PRIMITIVE: dict[Type, sa.types.TypeEngine[Any]] = {
    Type.INT8: sa.SmallInteger(),
    Type.INT16: sa.SmallInteger(),
    Type.INT32: sa.Integer(),
    Type.INT64: sa.BigInteger(),
    Type.FLOAT32: sa.REAL(),
    Type.FLOAT64: sa.Double(),
    Type.BOOLEAN: sa.Boolean(),
    Type.STRING: sa.Text(),
    Type.BYTES: sa.LargeBinary(),
}


def _days(v: Any) -> Any:
    return EPOCH_DATE + dt.timedelta(days=v) if isinstance(v, int) else v


def _scaled_ts(unit: int) -> Adapter:
    def convert(v: Any) -> Any:
        return EPOCH + dt.timedelta(microseconds=v * 1_000_000 // unit) if isinstance(v, int) else v

    return convert


def _scaled_time(unit: int) -> Adapter:
    def convert(v: Any) -> Any:
        if not isinstance(v, int):
            return v
        return (dt.datetime.min + dt.timedelta(microseconds=v * 1_000_000 // unit)).time()

    return convert


def _zoned(v: Any) -> Any:
    return dt.datetime.fromisoformat(v.replace("Z", "+00:00")) if isinstance(v, str) else v


def _variable_decimal(v: Any) -> Any:
    if isinstance(v, dict):
        raw, scale = v.get("value"), int(v.get("scale") or 0)
        if raw is None:
            return None
        if isinstance(raw, str):  # base64 when it came through JSON without a schema
            import base64

            raw = base64.b64decode(raw)
        unscaled = int.from_bytes(raw, "big", signed=True) if isinstance(raw, bytes) else int(raw)
        return decimal.Decimal(unscaled).scaleb(-scale)
    return v


def _connect_timestamp(v: Any) -> Any:
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.UTC).replace(tzinfo=None)  # Connect timestamps are UTC
    return _scaled_ts(1000)(v)


def to_json_text(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    return json.dumps(v, default=str, separators=(",", ":"))


_DEBEZIUM: dict[str, tuple[sa.types.TypeEngine[Any], Adapter | None]] = {
    "io.debezium.time.Date": (sa.Date(), _days),
    "io.debezium.time.Timestamp": (sa.DateTime(), _scaled_ts(1000)),
    "io.debezium.time.MicroTimestamp": (sa.DateTime(), _scaled_ts(1_000_000)),
    "io.debezium.time.NanoTimestamp": (sa.DateTime(), _scaled_ts(1_000_000_000)),
    "io.debezium.time.Time": (sa.Time(), _scaled_time(1000)),
    "io.debezium.time.MicroTime": (sa.Time(), _scaled_time(1_000_000)),
    "io.debezium.time.NanoTime": (sa.Time(), _scaled_time(1_000_000_000)),
    "io.debezium.time.ZonedTimestamp": (sa.DateTime(timezone=True), _zoned),
    "io.debezium.data.VariableScaleDecimal": (sa.Numeric(), _variable_decimal),
}


def column_type(schema: Schema) -> tuple[sa.types.TypeEngine[Any], Adapter | None]:
    """The column type for a field's schema and the adapter its values need (or None)."""
    name = schema.name
    if name:
        if name in _DEBEZIUM:
            return _DEBEZIUM[name]
        if name == DECIMAL:
            params = schema.parameters or {}
            scale = int(params.get("scale", 0))
            precision = int(params.get("connect.decimal.precision", 38))
            return sa.Numeric(precision, scale), None
        if name == DATE:
            return sa.Date(), _days
        if name == TIME:
            return sa.Time(), _scaled_time(1000)
        if name == TIMESTAMP:
            return sa.DateTime(), _connect_timestamp
    if schema.type in (Type.ARRAY, Type.MAP, Type.STRUCT):
        return sa.Text(), to_json_text
    return _PRIMITIVE[schema.type], None


def infer_type(value: Any) -> tuple[sa.types.TypeEngine[Any], Adapter | None]:
    """The column type for a schemaless value (see the module docstring)."""
    if isinstance(value, bool):
        return sa.Boolean(), None
    if isinstance(value, int):
        return sa.BigInteger(), None
    if isinstance(value, float):
        return sa.Double(), None
    if isinstance(value, decimal.Decimal):
        return sa.Numeric(), None
    if isinstance(value, dt.datetime):
        return sa.DateTime(timezone=value.tzinfo is not None), None
    if isinstance(value, dt.date):
        return sa.Date(), None
    if isinstance(value, bytes | bytearray):
        return sa.LargeBinary(), None
    if isinstance(value, dict | list):
        return sa.Text(), to_json_text
    return sa.Text(), None
