"""JSON Schema schemas: validated against their meta-schema by the ``jsonschema`` library.

A schema must be a JSON object or boolean that its draft's meta-schema accepts (draft 4 to
2020-12, chosen by ``$schema`` as ``jsonschema.validators.validator_for`` does); references
are other JSON Schemas reachable by their reference name as ``$ref`` (``"other.json"`` or
``"other.json#/definitions/X"``). Compatibility follows Confluent's rules (``_json_diff``).
The canonical form is the compacted JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema
import jsonschema.exceptions
import referencing
import referencing.jsonschema

from schema_registry.errors import InvalidSchema
from schema_registry.formats import ParsedSchema, _json_diff


class JsonSchema:
    schema_type = "JSON"

    def __init__(self, node: Any, references: Mapping[str, JsonSchema]) -> None:
        self.node = node
        self.references = dict(references)
        self.canonical = json.dumps(node, separators=(",", ":"), ensure_ascii=False)

    def resolve(self, ref: str, doc: Any) -> tuple[Any, Any]:
        """(schema, its document) for a ``$ref`` met inside ``doc``; InvalidSchema if absent."""
        target, _, fragment = ref.partition("#")
        if target:
            ref_schema = self.references.get(target)
            if ref_schema is None:
                raise InvalidSchema(f"Unresolved $ref '{ref}'")
            doc = ref_schema.node
        node = doc
        for part in [p for p in fragment.split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise InvalidSchema(f"Unresolved $ref '{ref}'")
        return node, doc

    def compatibility_errors(self, previous: ParsedSchema) -> list[str]:
        if not isinstance(previous, JsonSchema):
            return [f"Incompatible schema type: {previous.schema_type} vs JSON"]

        def resolve(ref: str, doc: Any) -> tuple[Any, Any]:
            for owner in (self, previous):  # a $ref is resolved where its document lives
                if doc is owner.node or any(doc is r.node for r in owner.references.values()):
                    return owner.resolve(ref, doc)
            return self.resolve(ref, doc)

        found = _json_diff.differences(previous.node, self.node, resolve)
        return [
            f"{{errorType:'{d.type}', description:'A {d.type} change at path '{d.path}' "
            "makes the new schema unable to read data the old schema accepted'}"
            for d in found
            if not d.compatible
        ]

    def equivalent(self, other: ParsedSchema) -> bool:
        return isinstance(other, JsonSchema) and (
            self.canonical == other.canonical or self.node == other.node
        )

    def validator(self) -> Any:
        """A ``jsonschema`` validator for values of this schema, references registered."""
        resources = [
            (name, referencing.jsonschema.specification_with(
                _dialect(ref.node), default=referencing.jsonschema.DRAFT7
            ).create_resource(ref.node))
            for name, ref in self.references.items()
        ]  # fmt: skip
        registry: referencing.Registry[Any] = referencing.Registry().with_resources(resources)
        cls = jsonschema.validators.validator_for(self.node, default=jsonschema.Draft7Validator)
        return cls(self.node, registry=registry)


def _dialect(node: Any) -> str:
    return node.get("$schema", "") if isinstance(node, dict) else ""


def parse(text: str, references: Mapping[str, ParsedSchema]) -> JsonSchema:
    try:
        node = json.loads(text)
    except ValueError as exc:
        raise InvalidSchema(f"Invalid schema: not JSON ({exc})") from None
    if not isinstance(node, dict | bool):
        raise InvalidSchema("Invalid schema: a JSON Schema is an object or a boolean")
    refs: dict[str, JsonSchema] = {}
    for name, ref in references.items():
        if not isinstance(ref, JsonSchema):
            raise InvalidSchema(f"Reference {name!r} is a {ref.schema_type} schema, not JSON")
        refs[name] = ref
    cls = jsonschema.validators.validator_for(node, default=jsonschema.Draft7Validator)
    try:
        cls.check_schema(node)
    except jsonschema.exceptions.SchemaError as exc:
        raise InvalidSchema(f"Invalid schema {text[:200]}, details: {exc.message}") from None
    parsed = JsonSchema(node, refs)
    _check_refs(parsed, node, node, set())
    return parsed


def _check_refs(schema: JsonSchema, node: Any, doc: Any, seen: set[int]) -> None:
    """Every ``$ref`` must resolve (Confluent rejects unresolved ones as invalid)."""
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith(("http://", "https://")):
            target, target_doc = schema.resolve(ref, doc)
            _check_refs(schema, target, target_doc, seen)
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples"):
                _check_refs(schema, value, doc, seen)
    elif isinstance(node, list):
        for item in node:
            _check_refs(schema, item, doc, seen)
