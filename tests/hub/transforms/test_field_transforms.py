"""ExtractField, HoistField, Flatten, ValueToKey: with and without schemas."""

from __future__ import annotations

import pytest

from hub.api import ConfigError, DataError, Schema, SourceRecord
from hub.api.schema import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    STRING_SCHEMA,
    Type,
    struct,
)
from hub.transforms.extract_field import ExtractField
from hub.transforms.flatten import Flatten
from hub.transforms.hoist_field import HoistField
from hub.transforms.value_to_key import ValueToKey


def make(cls, variant="value", **config):  # type: ignore[no-untyped-def]
    return cls(cls.config_model.parse(config), variant)


ADDRESS = struct(("city", STRING_SCHEMA), ("zip", OPTIONAL_INT32_SCHEMA), optional=True)
PERSON = struct(("id", INT64_SCHEMA), ("address", ADDRESS), name="Person")


def test_extract_field_schemaless_and_key_variant() -> None:
    out = make(ExtractField, "key", field="id").apply(
        SourceRecord(topic="t", key={"id": 5, "x": 1}, value="v")
    )
    assert out is not None and (out.key, out.key_schema, out.value) == (5, None, "v")
    out = make(ExtractField, field="missing").apply(SourceRecord(topic="t", value={"a": 1}))
    assert out is not None and out.value is None
    out = make(ExtractField, field="a").apply(SourceRecord(topic="t", value=None))
    assert out is not None and out.value is None


def test_extract_field_with_schema_and_nested_v2() -> None:
    value = {"id": 1, "address": {"city": "Oslo", "zip": None}}
    record = SourceRecord(topic="t", value=value, value_schema=PERSON)
    out = make(ExtractField, field="address").apply(record)
    assert out is not None and out.value_schema == ADDRESS and out.value["city"] == "Oslo"
    nested = make(ExtractField, field="address.city", **{"field.syntax.version": "V2"})
    out = nested.apply(record)
    assert out is not None and (out.value, out.value_schema) == ("Oslo", STRING_SCHEMA)
    out = nested.apply(SourceRecord(topic="t", value={"address": {"city": "Rome"}}))
    assert out is not None and out.value == "Rome"
    # V1 takes the dotted name literally
    out = make(ExtractField, field="address.city").apply(
        SourceRecord(topic="t", value={"address.city": "flat"})
    )
    assert out is not None and out.value == "flat"


def test_extract_field_errors() -> None:
    with pytest.raises(DataError, match="unknown field 'nope'"):
        make(ExtractField, field="nope").apply(
            SourceRecord(topic="t", value={"id": 1}, value_schema=PERSON)
        )
    with pytest.raises(DataError, match="dict values"):
        make(ExtractField, field="a").apply(SourceRecord(topic="t", value=[1]))
    with pytest.raises(ConfigError) as exc:
        ExtractField.config_model.parse({})
    assert exc.value.errors == {"field": ["Missing required configuration"]}


def test_hoist_field() -> None:
    out = make(HoistField, field="line").apply(SourceRecord(topic="t", value="hello"))
    assert out is not None and out.value == {"line": "hello"} and out.value_schema is None
    out = make(HoistField, "key", field="k").apply(
        SourceRecord(topic="t", key=3, key_schema=INT32_SCHEMA)
    )
    assert out is not None and out.key == {"k": 3}
    assert out.key_schema == Schema(Type.STRUCT, fields=(struct(("k", INT32_SCHEMA)).fields))


def test_flatten_schemaless() -> None:
    value = {"a": {"b": {"c": 1}, "d": [1, {"x": 1}]}, "e": None}
    out = make(Flatten, delimiter="_").apply(SourceRecord(topic="t", value=value))
    assert out is not None and out.value == {"a_b_c": 1, "a_d": [1, {"x": 1}], "e": None}
    out = make(Flatten).apply(SourceRecord(topic="t", value=None))
    assert out is not None and out.value is None


def test_flatten_with_schema_makes_children_of_optional_parents_optional() -> None:
    t = make(Flatten)
    out = t.apply(SourceRecord(topic="t", value={"id": 1, "address": None}, value_schema=PERSON))
    assert out is not None and out.value_schema is not None
    assert out.value == {"id": 1, "address.city": None, "address.zip": None}
    fields = {f.name: f.schema for f in out.value_schema.fields}
    assert fields["address.city"].type is Type.STRING and fields["address.city"].optional
    assert not fields["id"].optional
    assert out.value_schema.name == "Person"
    out = t.apply(
        SourceRecord(
            topic="t", value={"id": 2, "address": {"city": "Oslo", "zip": 1}}, value_schema=PERSON
        )
    )
    assert out is not None and out.value == {"id": 2, "address.city": "Oslo", "address.zip": 1}


def test_value_to_key() -> None:
    t = ValueToKey(ValueToKey.config_model.parse({"fields": "id,name"}))
    out = t.apply(SourceRecord(topic="t", key="old", value={"id": 1, "name": "a", "x": 0}))
    assert out is not None and out.key == {"id": 1, "name": "a"} and out.key_schema is None
    schema = struct(("id", INT64_SCHEMA), ("name", STRING_SCHEMA), ("x", INT32_SCHEMA))
    out = t.apply(
        SourceRecord(topic="t", value={"id": 1, "name": "a", "x": 0}, value_schema=schema)
    )
    assert out is not None and out.key_schema is not None
    assert out.key == {"id": 1, "name": "a"}
    assert [(f.name, f.schema) for f in out.key_schema.fields] == [
        ("id", INT64_SCHEMA),
        ("name", STRING_SCHEMA),
    ]
    with pytest.raises(DataError, match="'id' does not exist"):
        t.apply(SourceRecord(topic="t", value={"x": 1}, value_schema=struct(("x", INT32_SCHEMA))))
    with pytest.raises(DataError, match="dict values"):
        t.apply(SourceRecord(topic="t", value="line"))
    tombstone = SourceRecord(topic="t", key={"id": 1}, value=None)
    assert t.apply(tombstone) is tombstone
