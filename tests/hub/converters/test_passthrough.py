"""The JSON converter's fast path (``_passthrough`` + orjson) against its generic walk.

Property: for any struct schema of ints, strings, booleans and nested structs, and any value
(conforming or not: wrong types, out-of-range ints, nulls, extra/missing/reordered keys,
subclasses), ``from_connect`` writes exactly the bytes of the generic walk plus the stdlib
encoder, or raises the same DataError; reading gives what the generic decoder gives.
"""

from __future__ import annotations

import decimal
import enum
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hub.api import DataError
from hub.api.schema import Field, Schema, Type
from hub.converters import _json_data, _passthrough, logical
from hub.converters.json import _ENCODER, JsonConverter
from tests.hub.converters import test_json_roundtrip_property as roundtrip

BOUNDS = {Type.INT8: 7, Type.INT16: 15, Type.INT32: 31, Type.INT64: 63}
# where exponent notation starts (1e-4, 1e16) on both sides, non-finite values, subnormals
FLOAT_EDGES = [0.0, -0.0, 1e-4, -1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, 1e-5,
               1e300, 5e-324, float("nan"), float("inf"), float("-inf"), 0.1 + 0.2]  # fmt: skip
NAMES = st.from_regex(r"[a-z_\"\\ ]{1,5}", fullmatch=True)


class Color(enum.StrEnum):
    RED = "red"


def _leaf(kind: Type, optional: bool, default: Any) -> Schema:
    return Schema(kind, optional=optional, default=default)


def leaves() -> st.SearchStrategy[Schema]:
    kinds = st.sampled_from([*BOUNDS, Type.STRING, Type.BOOLEAN, Type.FLOAT32, Type.FLOAT64])
    defaults = {Type.STRING: "dflt", Type.BOOLEAN: True, Type.FLOAT32: 1.5, Type.FLOAT64: 0.25}

    def build(kind: Type, optional: bool, with_default: bool) -> Schema:
        default = defaults.get(kind, 7) if with_default else None
        return _leaf(kind, optional, default)

    return st.builds(build, kinds, st.booleans(), st.booleans())


def schemas() -> st.SearchStrategy[Schema]:
    def extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
        pairs = st.lists(st.tuples(NAMES, children), max_size=5, unique_by=lambda p: p[0])
        return st.builds(
            lambda fields, optional: Schema(
                Type.STRUCT,
                optional=optional,
                name="s",
                fields=tuple(Field(n, s) for n, s in fields),
            ),
            pairs,
            st.booleans(),
        )

    return extend(st.recursive(leaves(), extend, max_leaves=10))


def good_leaf(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.type in BOUNDS:
        bits = BOUNDS[schema.type]
        edges = [-(2**bits) - 1, -(2**bits), 2**bits - 1, 2**bits]  # two in range, two not
        return st.integers(-(2**bits), 2**bits - 1) | st.sampled_from(edges)
    if schema.type is Type.BOOLEAN:
        return st.booleans()
    if schema.type in (Type.FLOAT32, Type.FLOAT64):
        return st.floats() | st.sampled_from(FLOAT_EDGES) | st.integers(-5, 5)
    return st.text(max_size=6)


ODD = st.sampled_from(
    [None, True, 0, -1, 2**31, 2**63, 2**64, -(2**63) - 1, 1.5, "x", b"x", Color.RED, [], {}]
)


def values(schema: Schema) -> st.SearchStrategy[Any]:
    """Mostly conforming values, with odd ones mixed in at every level."""
    if schema.type is Type.STRUCT:
        inner: st.SearchStrategy[Any] = st.fixed_dictionaries(
            {f.name: values(f.schema) for f in schema.fields}
        )
        mutated = inner.flatmap(
            lambda d: st.sampled_from(
                [
                    d,
                    dict(reversed(d.items())),
                    {**d, "extra": 1},
                    dict(list(d.items())[1:]),
                ]
            )
        )
        good = st.one_of(*[inner] * 6, mutated)
    else:
        good = good_leaf(schema)
    return st.one_of(*[good] * 8, ODD)


def generic(converter: JsonConverter, schema: Schema, value: Any) -> bytes | str:
    """The slow path's bytes (or its DataError message)."""
    codec = converter.codec
    try:
        body = _json_data.encoder(
            schema, numeric_decimals=codec.numeric, replace_null=codec.replace_null
        )(value)
        text = _ENCODER.encode(body)
    except DataError as exc:
        return f"DataError: {exc}"
    if not codec.schemas_enable:
        return text.encode()
    head = _ENCODER.encode(schema.to_json())
    return f'{{"schema":{head},"payload":{text}}}'.encode()


@settings(max_examples=200, deadline=None)
@given(st.data(), st.booleans(), st.booleans())
def test_fast_path_writes_what_the_generic_walk_writes(
    data: st.DataObject, envelope: bool, replace_null: bool
) -> None:
    schema = data.draw(schemas())
    value = data.draw(values(schema))
    converter = JsonConverter(
        {"schemas.enable": envelope, "replace.null.with.default": replace_null}, is_key=False
    )
    try:
        got: bytes | str | None = converter.from_connect("t", schema, value)
    except DataError as exc:
        got = f"DataError: {exc}"
    assert got == generic(converter, schema, value)
    if isinstance(got, bytes) and envelope and "nan" not in str(value).lower():
        slow = _json_data.decoder(schema)
        for _ in range(2):  # the second read takes the cached head and the fast path
            read = converter.to_connect("t", got)
            assert read.schema == schema
            assert read.value == slow(converter.codec.loads(got).value)


def test_change_event_envelope_takes_the_fast_path() -> None:
    row = Schema(
        Type.STRUCT,
        optional=True,
        fields=(Field("id", Schema(Type.INT64)), Field("pad", Schema(Type.STRING, optional=True))),
    )
    source = Schema(
        Type.STRUCT,
        fields=(
            Field("snapshot", Schema(Type.STRING, optional=True, default="false")),
            Field("lsn", Schema(Type.INT64, optional=True)),
        ),
    )
    envelope = Schema(
        Type.STRUCT,
        fields=(Field("before", row), Field("after", row), Field("source", source)),
    )
    check = _passthrough.checker(envelope)
    assert check is not None
    event = {
        "before": None,
        "after": {"id": 1, "pad": "é\n"},
        "source": {"snapshot": "false", "lsn": None},
    }
    assert check(event)
    # a null where replace.null.with.default would write the default: generic path
    assert not check({**event, "source": {"snapshot": None, "lsn": 1}})
    assert _passthrough.checker(envelope, replace_null=False) is not None
    assert _passthrough.checker(envelope, replace_null=False)(
        {**event, "source": {"snapshot": None, "lsn": 1}}
    )  # type: ignore[misc]
    converter = JsonConverter({}, is_key=False)
    data = converter.from_connect("t", envelope, event)
    assert data is not None and data.endswith(
        b'"payload":{"before":null,"after":{"id":1,"pad":"\xc3\xa9\\n"},"source":{"snapshot":"false","lsn":null}}}'
    )
    assert converter.from_connect(
        "t", envelope, {**event, "source": {"snapshot": None, "lsn": 1}}
    ) == (data.replace(b'"lsn":null', b'"lsn":1'))


@pytest.mark.parametrize(
    "schema",
    [
        Schema(Type.STRING),
        Schema(Type.STRUCT, fields=(Field("f", Schema(Type.FLOAT64)),)),
        Schema(Type.STRUCT, fields=(Field("b", Schema(Type.BYTES)),)),
        Schema(Type.STRUCT, fields=(Field("a", Schema(Type.ARRAY, value=Schema(Type.INT32))),)),
        Schema(
            Type.STRUCT,
            fields=(
                Field("t", Schema(Type.INT64, name="org.apache.kafka.connect.data.Timestamp")),
            ),
        ),
    ],
)
def test_transformed_types_have_no_fast_path(schema: Schema) -> None:
    assert _passthrough.checker(schema) is None


def test_huge_int_read_stays_an_int_and_out_of_range_writes_fail() -> None:
    schema = Schema(Type.STRUCT, fields=(Field("n", Schema(Type.INT64)),))
    converter = JsonConverter({}, is_key=False)
    data = converter.from_connect("t", schema, {"n": 1})
    assert data is not None
    converter.to_connect("t", data)  # caches the head
    huge = data.replace(b'"n":1', b'"n":123456789012345678901234567890')
    assert converter.to_connect("t", huge).value == {"n": 123456789012345678901234567890}
    with pytest.raises(DataError, match="not a valid int64"):
        converter.from_connect("t", schema, {"n": 2**63})


def test_lone_surrogate_behaves_as_before() -> None:
    schema = Schema(Type.STRUCT, fields=(Field("s", Schema(Type.STRING)),))
    with pytest.raises(UnicodeEncodeError):
        JsonConverter({}, is_key=False).from_connect("t", schema, {"s": "\ud800"})


def test_reading_alternating_schemas_keeps_each_message_its_own() -> None:
    a = Schema(Type.STRUCT, name="a", fields=(Field("n", Schema(Type.INT32)),))
    b = Schema(Type.STRUCT, name="b", fields=(Field("n", Schema(Type.STRING)),))
    writer, reader = JsonConverter({}, is_key=False), JsonConverter({}, is_key=False)
    messages = [
        (a, writer.from_connect("t", a, {"n": 1})),
        (b, writer.from_connect("t", b, {"n": "x"})),
        (a, writer.from_connect("t", a, {"n": 2})),
        (a, writer.from_connect("t", a, {"n": 3})),
        (b, (writer.from_connect("t", b, {"n": "y"}) or b"") + b" \n"),
    ]
    for _ in range(2):
        for schema, data in messages:
            got = reader.to_connect("t", data)
            assert got.schema == schema
            assert got.value == {"n": json.loads(data)["payload"]["n"]}
    head_a = messages[0][1].split(b',"payload":')[0]  # type: ignore[union-attr]
    with pytest.raises(DataError, match="expected int32"):
        reader.to_connect("t", head_a + b',"payload":{"n":"x"}}')


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(), st.sampled_from(FLOAT_EDGES), st.floats(-1e-3, 1e-3)))
def test_floats_write_the_same_text_either_way(value: float) -> None:
    schema = Schema(
        Type.STRUCT, fields=(Field("f", Schema(Type.FLOAT64)), Field("g", Schema(Type.FLOAT32)))
    )
    converter = JsonConverter({}, is_key=False)
    got = converter.from_connect("t", schema, {"f": value, "g": value})
    assert got == generic(converter, schema, {"f": value, "g": value})


@settings(max_examples=200, deadline=None)
@given(st.data(), st.booleans())
def test_walked_values_written_by_orjson_match_the_stdlib(
    data: st.DataObject, envelope: bool
) -> None:
    """Any schema (bytes, decimals, temporal types, arrays, maps): when the generic walk runs
    and the schema has no floats, orjson writes its output; the bytes must not change."""
    schema = data.draw(roundtrip.schemas())
    value = data.draw(roundtrip.values(schema))
    converter = JsonConverter({"schemas.enable": envelope}, is_key=False)
    assert converter.from_connect("t", schema, value) == generic(converter, schema, value)
    numeric = JsonConverter({"decimal.format": "NUMERIC"}, is_key=False)
    assert numeric.from_connect("t", schema, value) == generic_numeric(numeric, schema, value)


def generic_numeric(converter: JsonConverter, schema: Schema, value: Any) -> bytes | str:
    out = generic(converter, schema, value)
    if isinstance(out, bytes) and b"\\u0000decimal:" in out:
        text = re.sub(r'"\\u0000decimal:([-0-9.Ee+]+)"', r"\1", out.decode())
        return text.encode()
    return out


def test_rows_with_bytes_and_decimals_take_orjson_after_the_walk() -> None:
    row = Schema(
        Type.STRUCT,
        fields=(
            Field("blob", Schema(Type.BYTES)),
            Field("amount", logical.decimal_schema(2)),
            Field("name", Schema(Type.STRING)),
        ),
    )
    converter = JsonConverter({}, is_key=False)
    writer = converter.codec._writer(row)
    assert writer.passthrough is None and writer.orjson_safe
    value = {"blob": b"\x00\x01", "amount": decimal.Decimal("12.34"), "name": "é"}
    assert converter.from_connect("t", row, value) == generic(converter, row, value)
    floats = Schema(
        Type.STRUCT, fields=(Field("x", Schema(Type.ARRAY, value=Schema(Type.FLOAT64))),)
    )
    assert not converter.codec._writer(floats).orjson_safe
    assert (
        not JsonConverter({"decimal.format": "NUMERIC"}, is_key=False)
        .codec._writer(row)
        .orjson_safe
    )
