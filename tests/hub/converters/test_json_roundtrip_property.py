"""Property: any Connect value written by JsonConverter reads back equal, schema included."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hub.api.schema import Field, Schema, Type
from hub.converters import logical
from hub.converters.json import JsonConverter

INT_BOUNDS = {Type.INT8: 7, Type.INT16: 15, Type.INT32: 31, Type.INT64: 63}


def _primitive_values(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.name == logical.TIMESTAMP:
        return st.datetimes(
            min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)
        ).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=dt.UTC))
    if schema.name == logical.TIME:
        return st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))
    if schema.name == logical.DATE:
        return st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 1, 1))
    if schema.name == logical.DECIMAL:
        return st.integers(-(10**20), 10**20).map(lambda n: decimal.Decimal(n).scaleb(-2))
    if schema.type in INT_BOUNDS:
        bits = INT_BOUNDS[schema.type]
        return st.integers(-(2**bits), 2**bits - 1)
    if schema.type is Type.FLOAT64:
        return st.floats(allow_nan=False, allow_infinity=False)
    if schema.type is Type.BOOLEAN:
        return st.booleans()
    if schema.type is Type.STRING:
        return st.text(max_size=20)
    return st.binary(max_size=20)


PRIMITIVES = st.sampled_from(
    [Schema(t) for t in (*INT_BOUNDS, Type.FLOAT64, Type.BOOLEAN, Type.STRING, Type.BYTES)]
    + [logical.TIMESTAMP_SCHEMA, logical.DATE_SCHEMA, logical.TIME_SCHEMA]
    + [logical.decimal_schema(2)]
)


def _optional(schema: Schema, flag: bool) -> Schema:
    return Schema(**{**{f: getattr(schema, f) for f in Schema.__slots__}, "optional": flag})


def schemas() -> st.SearchStrategy[Schema]:
    leaf = st.builds(_optional, PRIMITIVES, st.booleans())

    def extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
        fields = st.lists(
            st.tuples(st.from_regex(r"[a-z]{1,6}", fullmatch=True), children),
            min_size=1,
            max_size=4,
            unique_by=lambda pair: pair[0],
        )
        structs = fields.map(
            lambda pairs: Schema(Type.STRUCT, fields=tuple(Field(n, s) for n, s in pairs))
        )
        arrays = st.builds(lambda s: Schema(Type.ARRAY, value=s), children)
        keys = st.sampled_from([Schema(Type.STRING), Schema(Type.INT32)])
        maps = st.builds(lambda k, v: Schema(Type.MAP, key=k, value=v), keys, children)
        return structs | arrays | maps

    return st.recursive(leaf, extend, max_leaves=8)


def values(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.type is Type.STRUCT:
        inner = st.fixed_dictionaries({f.name: values(f.schema) for f in schema.fields})
    elif schema.type is Type.ARRAY:
        assert schema.value is not None
        inner = st.lists(values(schema.value), max_size=3)
    elif schema.type is Type.MAP:
        assert schema.key is not None and schema.value is not None
        inner = st.dictionaries(_primitive_values(schema.key), values(schema.value), max_size=3)
    else:
        inner = _primitive_values(schema)
    return st.none() | inner if schema.optional else inner


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_envelope_round_trip(data: st.DataObject) -> None:
    schema = data.draw(schemas())
    value = data.draw(values(schema))
    converter = JsonConverter({}, is_key=False)
    encoded = converter.from_connect("t", schema, value)
    assert encoded is not None
    for _ in range(2):  # second read goes through the cached-head path
        got = converter.to_connect("t", encoded)
        assert got.schema == schema
        assert got.value == value
