"""JSON Schema: meta-schema validation and Confluent's content-model compatibility rules."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schema_registry.compatibility import check
from schema_registry.errors import InvalidSchema
from schema_registry.formats import json_schema


def obj(props: dict[str, Any], **extra: Any) -> json_schema.JsonSchema:
    return json_schema.parse(json.dumps({"type": "object", "properties": props, **extra}), {})


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741


@pytest.mark.parametrize(
    ("old", "new", "ok"),
    [
        (
            obj({"a": S}, additionalProperties=False),
            obj({"a": S, "b": I}, additionalProperties=False),
            True,
        ),
        (obj({"a": S}), obj({"a": S, "b": I}), False),  # open model: b might have been anything
        (obj({"a": S, "b": I}), obj({"a": S}), True),  # removed from an open model
        (
            obj({"a": S, "b": I}, additionalProperties=False),
            obj({"a": S}, additionalProperties=False),
            False,
        ),
        (obj({"a": S}), obj({"a": I}), False),  # TYPE_CHANGED
        (obj({"a": S}), obj({"a": {"type": ["string", "null"]}}), True),  # SUM_TYPE_EXTENDED
        (obj({"a": I}), obj({"a": {"type": "number"}}), True),  # integer -> number
        (obj({"a": {"type": "number"}}), obj({"a": I}), False),
        (
            obj({"a": {"type": "string", "maxLength": 5}}),
            obj({"a": {"type": "string", "maxLength": 9}}),
            True,
        ),
        (
            obj({"a": {"type": "string", "maxLength": 9}}),
            obj({"a": {"type": "string", "maxLength": 5}}),
            False,
        ),
        (obj({"a": {"enum": ["x"]}}), obj({"a": {"enum": ["x", "y"]}}), True),
        (obj({"a": {"enum": ["x", "y"]}}), obj({"a": {"enum": ["x"]}}), False),
        (
            obj({"a": S}, additionalProperties=False),
            obj({"a": S, "b": I}, required=["b"], additionalProperties=False),
            False,
        ),
        (
            obj({"a": S}, additionalProperties=False),
            obj({"a": S, "b": {**I, "default": 1}}, required=["b"], additionalProperties=False),
            True,
        ),
        (obj({"a": S}, required=["a"]), obj({"a": S}), True),  # REQUIRED_ATTRIBUTE_REMOVED
        (obj({"a": S}), obj({"a": S}, required=["a"]), False),
    ],
)
def test_backward_rules(old: Any, new: Any, ok: bool) -> None:
    problems = check("BACKWARD", new, [(1, old)])
    assert (problems == []) is ok, problems


def test_refs_local_and_by_reference() -> None:
    local = json_schema.parse(json.dumps({
        "type": "object", "properties": {"a": {"$ref": "#/definitions/x"}},
        "definitions": {"x": {"type": "string"}},
    }), {})  # fmt: skip
    changed = json_schema.parse(json.dumps({
        "type": "object", "properties": {"a": {"$ref": "#/definitions/x"}},
        "definitions": {"x": {"type": "integer"}},
    }), {})  # fmt: skip
    assert check("BACKWARD", changed, [(1, local)]) != []
    address = json_schema.parse(
        '{"type": "object", "properties": {"city": {"type": "string"}}}', {}
    )
    user = '{"type": "object", "properties": {"home": {"$ref": "address.json"}}}'
    with pytest.raises(InvalidSchema):
        json_schema.parse(user, {})
    parsed = json_schema.parse(user, {"address.json": address})
    assert parsed.validator().is_valid({"home": {"city": "Oslo"}})
    assert not parsed.validator().is_valid({"home": {"city": 3}})


def test_meta_schema_violations_are_invalid() -> None:
    with pytest.raises(InvalidSchema):
        json_schema.parse('{"type": "strng"}', {})
    with pytest.raises(InvalidSchema):
        json_schema.parse('{"type": "object", "required": "a"}', {})
