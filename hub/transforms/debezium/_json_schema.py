"""``table.expand.json.payload``: a JSON document -> a Connect schema and value, as the outbox
router infers them (Debezium's ``JsonSchemaData``).

Rules: strings, booleans -> optional STRING/BOOLEAN; integers -> optional INT32 when they fit,
INT64 when they fit, else FLOAT64; other numbers -> optional FLOAT64; an object -> an optional
struct named by its path from the payload field (``payload``, ``payload.address``), fields in
document order, a field whose value gives no schema left out; an array -> an optional array of
its first non-null element's schema, elements of objects merged field by field (first seen
first), elements of other kinds or number types mixed -> an error. ``null`` gives no schema
(``ignore``) or optional BYTES (``optional_bytes``); an empty array gives no schema
(``ignore``) or an optional array of optional strings (``optional_string``). A JSON value
without a schema inside an array is an error. The caller keeps the payload as it was (and
logs why) when expansion fails, as Debezium does.
"""

from __future__ import annotations

from typing import Any

from hub.api import Field, Schema, Type

_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)


class JsonSchemaError(ValueError):
    """The document cannot be given a schema (mixed arrays, arrays of nulls)."""


class JsonSchemaData:
    def __init__(self, null_behavior: str = "ignore", empty_array_behavior: str = "ignore"):
        self.null_bytes = null_behavior == "optional_bytes"
        self.empty_strings = empty_array_behavior == "optional_string"

    def schema(self, key: str | None, node: Any) -> Schema | None:
        if isinstance(node, bool):
            return Schema(Type.BOOLEAN, optional=True)
        if isinstance(node, str):
            return Schema(Type.STRING, optional=True)
        if isinstance(node, int):
            if _INT32[0] <= node <= _INT32[1]:
                return Schema(Type.INT32, optional=True)
            if _INT64[0] <= node <= _INT64[1]:
                return Schema(Type.INT64, optional=True)
            return Schema(Type.FLOAT64, optional=True)
        if isinstance(node, float):
            return Schema(Type.FLOAT64, optional=True)
        if isinstance(node, list):
            if not node:
                if self.empty_strings:
                    return Schema(Type.ARRAY, optional=True,
                                  value=Schema(Type.STRING, optional=True))  # fmt: skip
                return None
            return Schema(Type.ARRAY, optional=True, value=self._element_schema(key, node))
        if isinstance(node, dict):
            fields: list[Field] = []
            for name, child in node.items():
                child_key = f"{key}.{name}" if key else name
                child_schema = self.schema(child_key, child)
                if child_schema is not None and all(f.name != name for f in fields):
                    fields.append(Field(name, child_schema))
            return Schema(Type.STRUCT, optional=True, name=key, fields=tuple(fields))
        if node is None and self.null_bytes:
            return Schema(Type.BYTES, optional=True)
        return None

    def _element_schema(self, key: str | None, items: list[Any]) -> Schema:
        present = [item for item in items if item is not None]
        if not present:
            raise JsonSchemaError(f"array {items!r} has unrecognized member schema")
        kind = _kind(present[0])
        if any(_kind(item) != kind for item in present):
            raise JsonSchemaError("field is not a homogenous array")
        if kind == "number":
            schemas = {self.schema(None, item) for item in present}
            if len(schemas) > 1:
                raise JsonSchemaError("field is not a homogenous array (different number types)")
        if kind != "object":
            element = self.schema(None, present[0])
            if element is None:
                raise JsonSchemaError(f"array {items!r} has unrecognized member schema")
            return element
        merged: dict[str, Field] = {}
        first: Schema | None = None
        for item in present:
            schema = self.schema(key, item)
            assert schema is not None
            first = first or schema
            for field in schema.fields:
                old = merged.get(field.name)
                if old is None or (old.schema.type is Type.BYTES
                                   and field.schema.type is not Type.BYTES):  # fmt: skip
                    merged[field.name] = field
        assert first is not None
        return Schema(Type.STRUCT, optional=True, name=first.name, fields=tuple(merged.values()))

    def value(self, node: Any, schema: Schema) -> Any:
        """The document as Connect data of ``schema`` (a struct: fields the document has)."""
        if schema.type is not Type.STRUCT or not isinstance(node, dict):
            raise JsonSchemaError("only a JSON object expands into a struct")
        return self._struct(node, schema)

    def _struct(self, node: dict[str, Any], schema: Schema) -> dict[str, Any]:
        return {f.name: self._field(node.get(f.name), f.schema) if f.name in node else None
                for f in schema.fields}  # fmt: skip

    def _field(self, node: Any, schema: Schema) -> Any:
        if isinstance(node, dict):
            return self._struct(node, schema)
        if isinstance(node, list):
            assert schema.value is not None
            return [self._field(item, schema.value) for item in node]
        if isinstance(node, int) and not isinstance(node, bool) and schema.type is Type.FLOAT64:
            return float(node)
        return node


def _kind(node: Any) -> str:
    if isinstance(node, bool):
        return "boolean"
    if isinstance(node, int | float):
        return "number"
    if isinstance(node, str):
        return "string"
    if isinstance(node, list):
        return "array"
    return "object"
