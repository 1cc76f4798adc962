"""PostgreSQL column types -> Kafka Connect schemas and values, as Debezium maps them.

Defaults of Debezium's PostgreSQL connector (``decimal.handling.mode=precise``,
``time.precision.mode=adaptive``, ``interval.handling.mode=numeric``,
``binary.handling.mode=bytes``), so consumers written for Debezium read the same shapes:

=====================  ==========================================================
smallint/int/bigint    INT16 / INT32 / INT64
real / double          FLOAT32 / FLOAT64
numeric(p,s)           BYTES ``org.apache.kafka.connect.data.Decimal`` (scale param)
numeric                STRUCT ``io.debezium.data.VariableScaleDecimal`` {scale, value}
boolean                BOOLEAN
text/varchar/char      STRING
bytea                  BYTES
date                   INT32 ``io.debezium.time.Date`` (days since epoch)
time(p)                p<=3: INT32 ``io.debezium.time.Time`` (ms); else INT64 ``MicroTime``
timestamp(p)           p<=3: INT64 ``io.debezium.time.Timestamp`` (ms); else ``MicroTimestamp``
timestamptz / timetz   STRING ``io.debezium.time.ZonedTimestamp`` / ``ZonedTime`` (UTC, ISO-8601)
interval               INT64 ``io.debezium.time.MicroDuration`` (month = 30.4375 days)
uuid / json / jsonb    STRING ``io.debezium.data.Uuid`` / ``io.debezium.data.Json``
enum                   STRING ``io.debezium.data.Enum`` (``allowed`` param)
arrays                 ARRAY of the element's mapping (elements optional)
domains                their base type
anything else          STRING: the value's text form
=====================  ==========================================================

``decimal.handling.mode`` ``double`` and ``string`` are honoured too. Every mapping is a
(schema, text -> value) pair built once per column, so the per-row cost is one call per value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from connectors.postgres_cdc import _parse as p
from hub.api import Schema, Type

Convert = Callable[[str], Any]


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """What the catalog says about a type that is not a well-known built-in."""

    oid: int
    name: str
    kind: str  # pg_type.typtype: b(ase), e(num), d(omain), c(omposite), r(ange)
    elem: int  # array element type oid, 0 if not an array
    base: int  # domain base type oid
    labels: tuple[str, ...] = ()


TypeLookup = Callable[[int], TypeInfo | None]


def _named(kind: Type, name: str, params: dict[str, str] | None = None) -> Schema:
    return Schema(kind, name=name, version=1, parameters=params)


_SIMPLE: dict[int, tuple[Schema, Convert]] = {
    16: (Schema(Type.BOOLEAN), lambda t: t == "t"),
    17: (Schema(Type.BYTES), lambda t: bytes.fromhex(t[2:])),
    18: (Schema(Type.STRING), str),
    19: (Schema(Type.STRING), str),
    20: (Schema(Type.INT64), int),
    21: (Schema(Type.INT16), int),
    23: (Schema(Type.INT32), int),
    25: (Schema(Type.STRING), str),
    26: (Schema(Type.INT64), int),
    114: (_named(Type.STRING, "io.debezium.data.Json"), str),
    142: (_named(Type.STRING, "io.debezium.data.Xml"), str),
    700: (Schema(Type.FLOAT32), float),
    701: (Schema(Type.FLOAT64), float),
    1042: (Schema(Type.STRING), str),
    1043: (Schema(Type.STRING), str),
    1082: (_named(Type.INT32, "io.debezium.time.Date"), p.epoch_days),
    1184: (_named(Type.STRING, "io.debezium.time.ZonedTimestamp"), p.zoned_timestamp),
    1186: (_named(Type.INT64, "io.debezium.time.MicroDuration"), p.interval_micros),
    1266: (_named(Type.STRING, "io.debezium.time.ZonedTime"), p.zoned_time),
    2950: (_named(Type.STRING, "io.debezium.data.Uuid"), str),
    3802: (_named(Type.STRING, "io.debezium.data.Json"), str),
}
_NUMERIC, _TIME, _TIMESTAMP, _MONEY = 1700, 1083, 1114, 790


def _variable_decimal_schema() -> Schema:
    from hub.api import Field

    return Schema(
        Type.STRUCT,
        name="io.debezium.data.VariableScaleDecimal",
        version=1,
        doc="Variable scaled decimal",
        fields=(Field("scale", Schema(Type.INT32)), Field("value", Schema(Type.BYTES))),
    )


def _numeric(typmod: int, mode: str) -> tuple[Schema, Convert]:
    if mode == "double":
        return Schema(Type.FLOAT64), float
    if mode == "string":
        return Schema(Type.STRING), str
    if typmod < 0:

        def variable(text: str) -> Any:
            d = p.decimal_or_none(text)
            if d is None:
                return None
            scale = max(0, -int(d.as_tuple().exponent))
            return {"scale": scale, "value": p.unscaled_bytes(d, scale)}

        return _variable_decimal_schema(), variable
    precision, scale = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
    params = {"scale": str(scale), "connect.decimal.precision": str(precision)}
    schema = Schema(
        Type.BYTES, name="org.apache.kafka.connect.data.Decimal", version=1, parameters=params
    )
    return schema, p.decimal_or_none


def _money(mode: str) -> tuple[Schema, Convert]:
    def parse(text: str) -> Decimal:
        neg = text.startswith("-") or text.startswith("(")
        d = Decimal(text.strip("-()$").replace(",", ""))
        return -d if neg else d

    if mode == "double":
        return Schema(Type.FLOAT64), lambda t: float(parse(t))
    if mode == "string":
        return Schema(Type.STRING), lambda t: str(parse(t))
    params = {"scale": "2"}
    return Schema(Type.BYTES, name="org.apache.kafka.connect.data.Decimal", version=1,
                  parameters=params), parse  # fmt: skip


def _time(typmod: int) -> tuple[Schema, Convert]:
    if 0 <= typmod <= 3:
        return _named(Type.INT32, "io.debezium.time.Time"), lambda t: p.time_micros(t) // 1000
    return _named(Type.INT64, "io.debezium.time.MicroTime"), p.time_micros


def _timestamp(typmod: int) -> tuple[Schema, Convert]:
    if 0 <= typmod <= 3:

        def millis(text: str) -> int | None:
            us = p.timestamp_micros(text)
            return None if us is None else us // 1000

        return _named(Type.INT64, "io.debezium.time.Timestamp"), millis
    return _named(Type.INT64, "io.debezium.time.MicroTimestamp"), p.timestamp_micros


def mapping(
    oid: int, typmod: int, lookup: TypeLookup, decimal_mode: str = "precise"
) -> tuple[Schema, Convert]:
    """(non-optional schema, text -> value) for one column type."""
    simple = _SIMPLE.get(oid)
    if simple is not None:
        return simple
    if oid == _NUMERIC:
        return _numeric(typmod, decimal_mode)
    if oid == _TIME:
        return _time(typmod)
    if oid == _TIMESTAMP:
        return _timestamp(typmod)
    if oid == _MONEY:
        return _money(decimal_mode)
    info = lookup(oid)
    if info is None:
        return Schema(Type.STRING), str
    if info.elem:
        elem_schema, elem_convert = mapping(info.elem, -1, lookup, decimal_mode)
        item = Schema(elem_schema.type, optional=True, name=elem_schema.name,
                      version=elem_schema.version, parameters=elem_schema.parameters,
                      fields=elem_schema.fields)  # fmt: skip

        def convert_array(text: str) -> list[Any]:
            return _convert_items(p.array_literal(text), elem_convert)

        return Schema(Type.ARRAY, value=item), convert_array
    if info.kind == "e":
        params = {"allowed": ",".join(info.labels)}
        return _named(Type.STRING, "io.debezium.data.Enum", params), str
    if info.kind == "d" and info.base:
        return mapping(info.base, typmod, lookup, decimal_mode)
    return Schema(Type.STRING), str


def _convert_items(items: list[Any], convert: Convert) -> list[Any]:
    return [
        None if v is None else _convert_items(v, convert) if isinstance(v, list) else convert(v)
        for v in items
    ]


def optional(schema: Schema) -> Schema:
    if schema.optional:
        return schema
    return Schema(schema.type, True, schema.name, schema.version, schema.doc, None,
                  schema.parameters, schema.fields, schema.key, schema.value)  # fmt: skip
