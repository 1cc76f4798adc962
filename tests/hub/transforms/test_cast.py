from __future__ import annotations

import datetime as dt

import pytest

from hub.api import ConfigError, DataError, Schema, SinkRecord, SourceRecord
from hub.api.schema import INT32_SCHEMA, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, Type, struct
from hub.transforms.cast import Cast, CastConfig

SCHEMA = struct(
    ("id", INT32_SCHEMA), ("price", OPTIONAL_STRING_SCHEMA), ("flag", INT32_SCHEMA), name="Row"
)


def cast(spec: str, variant: str = "value") -> Cast:
    return Cast(CastConfig.parse({"spec": spec}), variant)  # type: ignore[arg-type]


def test_schemaless_fields() -> None:
    record = SourceRecord(topic="t", value={"id": "7", "price": "2.50", "flag": 1, "x": "k"})
    out = cast("id:int64,price:float64,flag:boolean").apply(record)
    assert out is not None
    assert out.value == {"id": 7, "price": 2.5, "flag": True, "x": "k"}


def test_with_schema_updates_field_types() -> None:
    record = SinkRecord(
        topic="t", value={"id": 1, "price": "9.5", "flag": 0}, value_schema=SCHEMA, offset=3
    )
    out = cast("id:string,price:float32,flag:boolean").apply(record)
    assert out is not None and out.value_schema is not None
    assert out.value == {"id": "1", "price": 9.5, "flag": False}
    types = {f.name: (f.schema.type, f.schema.optional) for f in out.value_schema.fields}
    assert types == {
        "id": (Type.STRING, False),
        "price": (Type.FLOAT32, True),
        "flag": (Type.BOOLEAN, False),
    }
    assert out.value_schema.name == "Row"
    assert out.offset == 3  # record type and other fields survive


def test_whole_key_cast_with_and_without_schema() -> None:
    k = cast("string", "key")
    out = k.apply(SourceRecord(topic="t", key=42, key_schema=INT32_SCHEMA, value="v"))
    assert out is not None
    assert (out.key, out.key_schema, out.value) == ("42", Schema(Type.STRING), "v")
    out = k.apply(SourceRecord(topic="t", key=True))
    assert out is not None and (out.key, out.key_schema) == ("true", None)


@pytest.mark.parametrize(
    ("value", "target", "expected"),
    [
        (300, "int8", 44),  # Java narrowing wraps
        (-129, "int8", 127),
        (3.9, "int32", 3),
        (True, "int16", 1),
        ("12", "int64", 12),
        ("1.5", "int32", 1),
        ("TRUE", "boolean", True),
        (0.0, "boolean", False),
        (b"\x00\x01", "string", "AAE="),
        ({"a": 1}, "string", '{"a":1}'),
        (dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC), "int64", 1000),
        (7, "float64", 7.0),
    ],
)
def test_value_casts(value: object, target: str, expected: object) -> None:
    out = cast(target).apply(SourceRecord(topic="t", value=value))
    assert out is not None and out.value == expected


def test_null_passes_and_bad_values_raise() -> None:
    out = cast("a:int32").apply(SourceRecord(topic="t", value=None))
    assert out is not None and out.value is None
    with pytest.raises(DataError, match="cannot cast 'abc' to int32"):
        cast("a:int32").apply(SourceRecord(topic="t", value={"a": "abc"}))
    with pytest.raises(DataError, match="dict values"):
        cast("a:int32").apply(SourceRecord(topic="t", value="scalar"))
    with pytest.raises(DataError, match="struct schema"):
        cast("a:int32").apply(SourceRecord(topic="t", value="s", value_schema=STRING_SCHEMA))


@pytest.mark.parametrize("spec", ["a:int128", "a:int32,b", "", "a:"])
def test_bad_spec_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError) as exc:
        CastConfig.parse({"spec": spec})
    assert "spec" in exc.value.errors


def test_schema_cache_reuses_derived_schema() -> None:
    c = cast("id:string")
    first = c.apply(
        SourceRecord(topic="t", value={"id": 1, "price": None, "flag": 1}, value_schema=SCHEMA)
    )
    second = c.apply(
        SourceRecord(topic="t", value={"id": 2, "price": None, "flag": 1}, value_schema=SCHEMA)
    )
    assert first is not None and second is not None
    assert first.value_schema is second.value_schema
