"""InsertField, MaskField, ReplaceField: with and without schemas."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from hub.api import ConfigError, DataError, SinkRecord, SourceRecord
from hub.api.schema import (
    BYTES_SCHEMA,
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Type,
    struct,
)
from hub.converters import logical
from hub.transforms.insert_field import InsertField
from hub.transforms.mask_field import MaskField
from hub.transforms.replace_field import ReplaceField


def make(cls, variant="value", **config):  # type: ignore[no-untyped-def]
    return cls(cls.config_model.parse(config), variant)


META = {
    "topic.field": "topic",
    "partition.field": "part!",
    "offset.field": "off?",
    "timestamp.field": "ts",
    "static.field": "origin",
    "static.value": "sluice",
}


def test_insert_field_schemaless_sink_record() -> None:
    record = SinkRecord(topic="t", partition=2, offset=9, timestamp=1000, value={"a": 1})
    out = make(InsertField, **META).apply(record)
    assert out is not None
    assert out.value == {"a": 1, "topic": "t", "part": 2, "off": 9, "ts": 1000, "origin": "sluice"}


def test_insert_field_with_schema() -> None:
    schema = struct(("a", INT32_SCHEMA), name="Row")
    record = SinkRecord(
        topic="t", partition=0, offset=1, timestamp=1000, value={"a": 1}, value_schema=schema
    )
    out = make(InsertField, **META).apply(record)
    assert out is not None and out.value_schema is not None
    fields = {f.name: f.schema for f in out.value_schema.fields}
    assert fields["topic"].type is Type.STRING and fields["topic"].optional
    assert fields["part"].type is Type.INT32 and not fields["part"].optional
    assert fields["off"].type is Type.INT64 and fields["off"].optional
    assert fields["ts"].name == logical.TIMESTAMP_SCHEMA.name
    assert out.value["ts"] == dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC)
    assert out.value_schema.name == "Row"


def test_insert_field_tombstone_passes_and_offset_needs_sink_record() -> None:
    t = make(InsertField, **{"topic.field": "topic"})
    tombstone = SourceRecord(topic="t", key="k", value=None)
    assert t.apply(tombstone) is tombstone
    with pytest.raises(DataError, match="sink records"):
        make(InsertField, **{"offset.field": "o"}).apply(SourceRecord(topic="t", value={}))
    out = make(InsertField, "key", **{"topic.field": "topic"}).apply(
        SourceRecord(topic="t", key={"id": 1})
    )
    assert out is not None and out.key == {"id": 1, "topic": "t"}


def test_mask_field_schemaless_empties_by_python_type() -> None:
    value = {
        "i": 5,
        "f": 1.5,
        "b": True,
        "s": "secret",
        "l": [1],
        "d": {"x": 1},
        "dec": decimal.Decimal("3.2"),
        "when": dt.datetime(2020, 1, 1, tzinfo=dt.UTC),
        "keep": "x",
        "none": None,
    }
    fields = "i,f,b,s,l,d,dec,when,none"
    out = make(MaskField, fields=fields).apply(SourceRecord(topic="t", value=value))
    assert out is not None
    assert out.value == {
        "i": 0,
        "f": 0.0,
        "b": False,
        "s": "",
        "l": [],
        "d": {},
        "dec": decimal.Decimal(0),
        "when": logical.EPOCH,
        "keep": "x",
        "none": None,
    }


def test_mask_field_replacement() -> None:
    t = make(MaskField, fields="ssn,age,score", replacement="123")
    out = t.apply(SourceRecord(topic="t", value={"ssn": "999-99", "age": 40, "score": 1.0}))
    assert out is not None and out.value == {"ssn": "123", "age": 123, "score": 123.0}
    with pytest.raises(DataError, match="custom replacement"):
        make(MaskField, fields="b", replacement="x").apply(
            SourceRecord(topic="t", value={"b": True})
        )
    with pytest.raises(DataError, match="not a valid int"):
        make(MaskField, fields="a", replacement="x").apply(SourceRecord(topic="t", value={"a": 1}))


def test_mask_field_with_schema_uses_schema_types() -> None:
    schema = struct(
        ("n", INT64_SCHEMA), ("s", OPTIONAL_STRING_SCHEMA), ("raw", BYTES_SCHEMA),
        ("ts", logical.TIMESTAMP_SCHEMA), ("f", FLOAT64_SCHEMA),
    )  # fmt: skip
    value = {"n": 3, "s": None, "raw": b"x", "ts": dt.datetime.now(dt.UTC), "f": 2.0}
    out = make(MaskField, "key", fields="n,s,raw,ts").apply(
        SourceRecord(topic="t", key=value, key_schema=schema)
    )
    assert out is not None and out.key_schema is schema
    assert out.key == {"n": 0, "s": None, "raw": b"", "ts": logical.EPOCH, "f": 2.0}
    with pytest.raises(DataError, match="'zz' does not exist"):
        make(MaskField, fields="zz").apply(
            SourceRecord(topic="t", value=value, value_schema=schema)
        )


def test_replace_field_schemaless() -> None:
    value = {"a": 1, "b": 2, "c": 3, "d": 4}
    out = make(ReplaceField, exclude="b", renames="a:alpha,c:gamma").apply(
        SourceRecord(topic="t", value=value)
    )
    assert out is not None and out.value == {"alpha": 1, "gamma": 3, "d": 4}
    out = make(ReplaceField, include="a,c").apply(SourceRecord(topic="t", value=value))
    assert out is not None and out.value == {"a": 1, "c": 3}


def test_replace_field_deprecated_names() -> None:
    out = make(ReplaceField, blacklist="a", whitelist="a,b").apply(
        SourceRecord(topic="t", value={"a": 1, "b": 2, "c": 3})
    )
    assert out is not None and out.value == {"b": 2}


def test_replace_field_with_schema() -> None:
    schema = struct(("id", INT64_SCHEMA), ("pw", STRING_SCHEMA), ("name", STRING_SCHEMA), name="U")
    t = make(ReplaceField, exclude="pw", renames="name:full_name")
    out = t.apply(
        SourceRecord(topic="t", value={"id": 1, "pw": "x", "name": "Ann"}, value_schema=schema)
    )
    assert out is not None and out.value_schema is not None
    assert out.value == {"id": 1, "full_name": "Ann"}
    assert [(f.name, f.schema) for f in out.value_schema.fields] == [
        ("id", INT64_SCHEMA),
        ("full_name", STRING_SCHEMA),
    ]
    assert out.value_schema.name == "U"
    tomb = t.apply(SourceRecord(topic="t", value=None, value_schema=schema))
    assert tomb is not None and tomb.value is None


def test_replace_field_bad_renames() -> None:
    with pytest.raises(ConfigError) as exc:
        ReplaceField.config_model.parse({"renames": "a:b,c"})
    assert "renames" in exc.value.errors
