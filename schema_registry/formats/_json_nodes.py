"""What a JSON Schema node is, as Confluent's ``json/diff`` sees it (``_json_diff`` compares).

Everit (which Confluent builds its comparison on) gives every schema a class: object, array,
string, number, a combined ``anyOf``/``allOf``/``oneOf``, an enum... ``kind_of`` decides that class
for a plain JSON document, and the helpers here read a node's content model (is it open, which
subschema covers a property name, the members of a combined node). ``max_matching`` pairs the
members of two combined nodes, as Confluent's comparison of sum and product types does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

COMBINERS = ("allOf", "anyOf", "oneOf")
OBJECT_KEYS = ("properties", "required", "additionalProperties", "patternProperties",
                "minProperties", "maxProperties")  # fmt: skip
ARRAY_KEYS = ("items", "additionalItems", "minItems", "maxItems", "uniqueItems", "prefixItems")
STRING_KEYS = ("minLength", "maxLength", "pattern", "format")
NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


@dataclass(frozen=True, slots=True)
class Node:
    """A schema with its kind decided (Everit's schema classes, which Confluent compares)."""

    kind: str  # empty false object array string number boolean null enum const combined not
    raw: Any
    doc: Any  # the document the node lives in, for resolving its $refs

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default) if isinstance(self.raw, dict) else default


def kind_of(schema: Any) -> str:
    if schema is True or schema == {}:
        return "empty"
    if schema is False:
        return "false"
    if not isinstance(schema, dict):
        return "empty"
    kind = schema.get("type")
    if isinstance(kind, list):
        return "combined" if len(kind) != 1 else named_kind(kind[0])
    if any(k in schema for k in COMBINERS):
        return "combined"
    if "enum" in schema:
        return "enum"
    if "const" in schema:
        return "const"
    if "not" in schema and kind is None:
        return "not"
    if kind is not None:
        return named_kind(kind)
    for keys, name in ((OBJECT_KEYS, "object"), (ARRAY_KEYS, "array"),
                       (STRING_KEYS, "string"), (NUMBER_KEYS, "number")):  # fmt: skip
        if any(k in schema for k in keys):
            return name
    return "empty"


def named_kind(kind: str) -> str:
    return "number" if kind == "integer" else str(kind)


def is_integer(node: Node) -> bool:
    kind = node.get("type")
    return kind == "integer" or kind == ["integer"]


def criterion_of(node: Node) -> str:
    if isinstance(node.get("type"), list):
        return "anyOf"
    return next((c for c in COMBINERS if c in node.raw), "anyOf")


def members(node: Node) -> list[Any]:
    """Subschemas of a combined node; a type list is an anyOf of one schema per type, and
    other keywords beside a combiner apply to every member (as Everit builds it)."""
    raw = node.raw
    kinds = raw.get("type")
    if isinstance(kinds, list):
        rest = {k: v for k, v in raw.items() if k != "type"}
        return [{**rest, "type": k} for k in kinds]
    criterion = criterion_of(node)
    return list(raw.get(criterion) or [])


def is_open(node: Node) -> bool:
    extra = node.get("additionalProperties", True)
    return extra is True and not node.get("patternProperties")


def partial(node: Node, name: str) -> Any:
    for pattern, schema in (node.get("patternProperties") or {}).items():
        if re.search(pattern, name):
            return schema
    extra = node.get("additionalProperties", True)
    return extra if isinstance(extra, dict) else None


def has_default(schema: Any) -> bool:
    return isinstance(schema, dict) and "default" in schema


def max_matching(edges: dict[int, list[tuple[int, Any]]]) -> dict[int, tuple[int, Any]]:
    """Maximum bipartite matching (Kuhn's augmenting paths); subschema counts are small."""
    owner: dict[int, int] = {}
    payload: dict[tuple[int, int], Any] = {}
    for i, targets in edges.items():
        for j, value in targets:
            payload[(i, j)] = value

    def augment(i: int, seen: set[int]) -> bool:
        for j, _ in edges.get(i, []):
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in edges:
        augment(i, set())
    return {i: (j, payload[(i, j)]) for j, i in owner.items()}
