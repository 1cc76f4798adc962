"""Connect schemas <-> JSON Schema documents, following Confluent's ``JsonSchemaData``.

Connect -> JSON Schema (draft 7 keywords, as Confluent writes them):

* int8..int64 -> ``{"type": "integer", "connect.type": "int8".."int64"}``; float32/float64
  -> ``number`` with ``connect.type``; boolean, string as themselves; bytes (and Decimal,
  base64 of the unscaled value) -> ``string`` with ``connect.type: bytes``.
* struct -> ``object`` with ``properties`` (each carries ``connect.index``, its position) and
  ``title`` = the schema name; map with string keys -> ``object`` + ``additionalProperties``
  (``connect.type: map``), other maps -> an array of ``{key, value}`` objects; array -> array.
* an optional schema -> ``{"oneOf": [{"type": "null"}, <schema>]}``; name -> ``title``,
  version -> ``connect.version``, doc -> ``description``, parameters -> ``connect.parameters``.

JSON Schema -> Connect reads those annotations back; for schemas not written by Connect:
``integer`` -> int64, ``number`` -> float64, ``object`` with ``properties`` -> struct (in
``connect.index`` order, else document order), ``object`` with only ``additionalProperties``
-> map, ``oneOf``/``anyOf`` of null and one schema -> optional; anything else (unions, ``$ref``
to outside documents...) -> a DataError naming the construct.
"""

from __future__ import annotations

from typing import Any

from hub.api import DataError, Field, Schema, Type

_NUMBERS = {Type.INT8: "integer", Type.INT16: "integer", Type.INT32: "integer",
            Type.INT64: "integer", Type.FLOAT32: "number", Type.FLOAT64: "number"}  # fmt: skip
_CONNECT_TYPE = {
    Type.INT8: "int8", Type.INT16: "int16", Type.INT32: "int32", Type.INT64: "int64",
    Type.FLOAT32: "float32", Type.FLOAT64: "float64", Type.BYTES: "bytes", Type.MAP: "map",
}  # fmt: skip
_BY_CONNECT_TYPE = {v: k for k, v in _CONNECT_TYPE.items()}


def json_schema(schema: Schema) -> dict[str, Any]:
    """The JSON Schema document for a Connect schema (top level)."""
    return _to_json(schema, None)


def _to_json(s: Schema, index: int | None) -> dict[str, Any]:
    out: dict[str, Any]
    if s.type in _NUMBERS:
        out = {"type": _NUMBERS[s.type], "connect.type": _CONNECT_TYPE[s.type]}
    elif s.type is Type.BOOLEAN:
        out = {"type": "boolean"}
    elif s.type is Type.STRING:
        out = {"type": "string"}
    elif s.type is Type.BYTES:
        out = {"type": "string", "connect.type": "bytes"}
    elif s.type is Type.ARRAY:
        assert s.value is not None
        out = {"type": "array", "items": _to_json(s.value, None)}
    elif s.type is Type.MAP:
        assert s.key is not None and s.value is not None
        if s.key.type is Type.STRING and not s.key.optional:
            out = {"type": "object", "additionalProperties": _to_json(s.value, None),
                   "connect.type": "map"}  # fmt: skip
        else:
            entry = {"type": "object", "properties": {"key": _to_json(s.key, 0),
                                                      "value": _to_json(s.value, 1)}}  # fmt: skip
            out = {"type": "array", "items": entry, "connect.type": "map"}
    else:
        props = {f.name: _to_json(f.schema, i) for i, f in enumerate(s.fields)}
        out = {"type": "object", "properties": props}
    if s.name is not None:
        out["title"] = s.name
    if s.version is not None:
        out["connect.version"] = s.version
    if s.doc is not None:
        out["description"] = s.doc
    if s.parameters:
        out["connect.parameters"] = dict(s.parameters)
    if s.optional:
        out = {"oneOf": [{"type": "null"}, out]}
    if index is not None:
        out["connect.index"] = index
    return out


def connect_schema(node: Any, version: int | None = None) -> Schema:
    """The Connect schema of a JSON Schema document."""
    result = _to_connect(node, optional=False)
    if version is not None and result.version is None:
        result = _with(result, version=version)
    return result


def _to_connect(node: Any, optional: bool) -> Schema:
    if node is True or node == {}:
        raise DataError("a JSON Schema accepting anything has no Connect schema")
    if not isinstance(node, dict):
        raise DataError(f"unsupported JSON Schema {node!r}")
    for combiner in ("oneOf", "anyOf"):
        branches = node.get(combiner)
        if branches is not None:
            rest = [b for b in branches if b != {"type": "null"}]
            if len(rest) == 1:
                return _to_connect(rest[0], optional=optional or len(rest) < len(branches))
            raise DataError(f"a JSON Schema {combiner} of several types has no Connect schema")
    kind = node.get("type")
    if isinstance(kind, list):
        rest = [k for k in kind if k != "null"]
        if len(rest) != 1:
            raise DataError(f"a JSON Schema type list {kind} has no Connect schema")
        return _to_connect({**node, "type": rest[0]}, optional=optional or "null" in kind)
    connect_type = str(node.get("connect.type", ""))
    if kind == "integer":
        s = Schema(_BY_CONNECT_TYPE.get(connect_type, Type.INT64))
    elif kind == "number":
        s = Schema(_BY_CONNECT_TYPE.get(connect_type, Type.FLOAT64))
        if s.type not in (Type.FLOAT32, Type.FLOAT64, Type.BYTES):
            s = Schema(Type.FLOAT64)
    elif kind == "boolean":
        s = Schema(Type.BOOLEAN)
    elif kind == "string":
        s = Schema(Type.BYTES if connect_type == "bytes" else Type.STRING)
    elif kind == "array":
        items = node.get("items", {})
        if connect_type == "map" and isinstance(items, dict):
            props = items.get("properties", {})
            s = Schema(Type.MAP, key=_to_connect(props.get("key", {}), False),
                       value=_to_connect(props.get("value", {}), False))  # fmt: skip
        else:
            s = Schema(Type.ARRAY, value=_to_connect(items, False))
    elif kind == "object" or "properties" in node:
        props = node.get("properties")
        extra = node.get("additionalProperties")
        if not props and isinstance(extra, dict):
            s = Schema(Type.MAP, key=Schema(Type.STRING), value=_to_connect(extra, False))
        else:
            ordered = sorted((props or {}).items(),
                             key=lambda kv: kv[1].get("connect.index", 1 << 30)
                             if isinstance(kv[1], dict) else 1 << 30)  # fmt: skip
            required = set(node.get("required") or [])
            fields = tuple(
                Field(name, _to_connect(sub, optional=_implicitly_optional(sub, name, required)))
                for name, sub in ordered
            )
            s = Schema(Type.STRUCT, fields=fields)
    else:
        raise DataError(f"JSON Schema type {kind!r} has no Connect schema")
    params = node.get("connect.parameters")
    version = node.get("connect.version")
    return _with(
        s, optional=optional, name=node.get("title"), doc=node.get("description"),
        version=int(version) if version is not None else None,
        parameters={str(k): str(v) for k, v in params.items()} if params else None,
        default=node.get("default"),
    )  # fmt: skip


def _implicitly_optional(sub: Any, name: str, required: set[str]) -> bool:
    """A property of a schema not written by Connect is optional unless ``required`` (Connect
    annotations mark optionality themselves with ``oneOf`` null)."""
    if isinstance(sub, dict) and "connect.index" in sub:
        return False
    return name not in required


def _with(s: Schema, **changes: Any) -> Schema:
    values = {k: getattr(s, k) for k in ("type", "optional", "name", "version", "doc", "default",
                                         "parameters", "fields", "key", "value")}  # fmt: skip
    values.update({k: v for k, v in changes.items() if v is not None or k == "optional"})
    return Schema(**values)
