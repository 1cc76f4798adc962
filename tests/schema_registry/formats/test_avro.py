"""Avro compatibility through Apache Avro's reader/writer rules, per level."""

from __future__ import annotations

import json

import pytest

from schema_registry.compatibility import check
from schema_registry.errors import InvalidSchema
from schema_registry.formats import avro


def record(*fields: dict[str, object], name: str = "User") -> avro.AvroSchema:
    return avro.parse(json.dumps({"type": "record", "name": name, "fields": list(fields)}), {})


A = {"name": "a", "type": "string"}
B_DEFAULT = {"name": "b", "type": "int", "default": 0}
B_REQUIRED = {"name": "b", "type": "int"}


@pytest.mark.parametrize(
    ("level", "old", "new", "ok"),
    [
        ("BACKWARD", [A], [A, B_DEFAULT], True),  # new field with a default
        ("BACKWARD", [A], [A, B_REQUIRED], False),  # new reader has no value for b
        ("BACKWARD", [A, B_REQUIRED], [A], True),  # a reader may ignore a field
        ("FORWARD", [A, B_REQUIRED], [A], False),  # the old reader needs b
        ("FORWARD", [A], [A, B_REQUIRED], True),
        ("FULL", [A], [A, B_DEFAULT], True),
        ("FULL", [A], [A, B_REQUIRED], False),
        ("NONE", [A], [{"name": "a", "type": "int"}], True),
        ("BACKWARD", [{"name": "n", "type": "int"}], [{"name": "n", "type": "long"}], True),
        ("BACKWARD", [{"name": "n", "type": "long"}], [{"name": "n", "type": "int"}], False),
        ("BACKWARD", [A], [{"name": "a", "type": ["null", "string"], "default": None}], True),
    ],
)
def test_levels(
    level: str, old: list[dict[str, object]], new: list[dict[str, object]], ok: bool
) -> None:
    problems = check(level, record(*new), [(1, record(*old))])
    assert (problems == []) is ok, problems


def test_transitive_checks_every_version() -> None:
    v1 = record(A)
    v2 = record()  # dropped a
    v3 = record({"name": "a", "type": "int", "default": 0})  # back, but as an int
    history = [(1, v1), (2, v2)]
    assert check("BACKWARD", v3, history) == []
    problems = check("BACKWARD_TRANSITIVE", v3, history)
    assert problems and "{oldSchemaVersion: 1}" in problems
    assert any("TYPE_MISMATCH" in p for p in problems)


def test_enum_symbols() -> None:
    def enum(*symbols: str) -> avro.AvroSchema:
        return avro.parse(json.dumps({"type": "enum", "name": "E", "symbols": list(symbols)}), {})

    assert check("BACKWARD", enum("A", "B", "C"), [(1, enum("A", "B"))]) == []
    assert check("BACKWARD", enum("A"), [(1, enum("A", "B"))]) != []


def test_invalid_schemas_are_rejected() -> None:
    for text in ('{"type": "record", "name": "X"}', '{"type": "nope"}', "not json"):
        with pytest.raises(InvalidSchema):
            avro.parse(text, {})


def test_references_define_named_types() -> None:
    address = avro.parse(json.dumps({
        "type": "record", "name": "Address", "namespace": "shop",
        "fields": [{"name": "city", "type": "string"}],
    }), {})  # fmt: skip
    user = json.dumps({
        "type": "record", "name": "User", "namespace": "shop",
        "fields": [{"name": "home", "type": "shop.Address"}],
    })  # fmt: skip
    with pytest.raises(InvalidSchema):
        avro.parse(user, {})
    parsed = avro.parse(user, {"shop.Address": address})
    assert '"shop.Address"' in parsed.canonical  # the reference stays a reference


def test_canonical_form_ignores_whitespace() -> None:
    a = avro.parse('{"type": "record", "name": "R", "fields": []}', {})
    b = avro.parse('{"type":"record","name":"R","fields":[]}', {})
    assert a.canonical == b.canonical and a.equivalent(b)
