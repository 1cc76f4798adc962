"""Connect schemas and values <-> Avro, following Confluent's ``AvroData``.

Shared by the ``AvroConverter`` (hub.converters) and the storage sinks' ``AvroFormat``
(connectors); it lives in the contract because connectors may import only ``hub.api``.
Schemas are plain JSON-ready Avro schemas (dicts, lists, strings), which fastavro parses.

Connect -> Avro (what Confluent's converter writes, so its consumers read ours):

* int8/int16 -> ``int`` with ``connect.type``; int32/int64/float32/float64/boolean/string/
  bytes -> int/long/float/double/boolean/string/bytes; array -> array; a map with
  (non-optional) string keys -> map, any other map -> array of ``MapEntry`` records
  ``{key, value}``; struct -> record named after the schema (namespace = the part before the
  last dot), ``io.confluent.connect.avro.ConnectDefault`` when unnamed.
* logical types: Decimal -> bytes + ``logicalType: decimal`` (precision from
  ``connect.decimal.precision``, else 64; scale), Date -> int ``date``, Time -> int
  ``time-millis``, Timestamp -> long ``timestamp-millis``. Other named types (Debezium's
  ``io.debezium.time.*``, ``VariableScaleDecimal`` ...) keep their base type and carry their
  name in ``connect.name``.
* metadata: ``connect.name``, ``connect.version``, ``connect.doc``, ``connect.parameters``,
  ``connect.default`` on the type (unless ``connect.meta.data=false``).
* optional schemas become ``["null", T]`` unions with a null default (``[T, "null"]`` when
  the field has a default, which Avro requires to match the first branch).
* a named type used twice is written once and referenced by full name afterwards (a Debezium
  envelope's ``before`` and ``after``), as Avro requires.

Avro -> Connect reverses this, for schemas that did not come from Connect too: records ->
structs named by ``connect.name`` or their full name, ``["null", T]`` -> optional T, enums ->
strings (``io.confluent.connect.avro.Enum`` parameters), fixed -> bytes, other unions ->
structs named ``io.confluent.connect.avro.Union`` with one optional field per branch.

Values: fastavro does the logical-type encoding itself (Decimal, date, time, datetime), so a
Connect value is an Avro datum as it is, except maps with non-string keys (entry records) and
union structs; ``avro_writer``/``connect_reader`` compile the few conversions a schema needs,
and are None when a schema needs none, so the common case costs nothing.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from hub.api.errors import DataError
from hub.api.schema import DATE, DECIMAL, TIME, TIMESTAMP, Field, Schema, Type

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_NAME = "ConnectDefault"
UNION_NAME = NAMESPACE + ".Union"
ENUM_PARAM = NAMESPACE + ".Enum"
MAP_ENTRY = "MapEntry"
PRECISION_PARAM = "connect.decimal.precision"
FIXED_SIZE_PARAM = "connect.fixed.size"
DEFAULT_PRECISION = 64

AvroSchema = Any  # dict | list | str: JSON-ready
Convert = Callable[[Any], Any]

_PRIMITIVES = {
    Type.INT8: "int", Type.INT16: "int", Type.INT32: "int", Type.INT64: "long",
    Type.FLOAT32: "float", Type.FLOAT64: "double", Type.BOOLEAN: "boolean",
    Type.STRING: "string", Type.BYTES: "bytes",
}  # fmt: skip
_LOGICAL = {DATE: "date", TIME: "time-millis", TIMESTAMP: "timestamp-millis"}
_NAME_OK = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# -- Connect -> Avro schema --------------------------------------------------------------------


class _ToAvro:
    def __init__(self, meta: bool, scrub: bool) -> None:
        self.meta = meta
        self.scrub = scrub
        self.defined: set[str] = set()
        self.unnamed = 0

    def schema(self, s: Schema, ignore_optional: bool = False) -> AvroSchema:
        base = self.base(s)
        if isinstance(base, list):  # a union struct: metadata cannot go on a union
            return base
        if not ignore_optional and s.optional:
            return [base, "null"] if s.default is not None else ["null", base]
        return base

    def base(self, s: Schema) -> AvroSchema:
        if s.type is Type.STRUCT and s.name == UNION_NAME:
            branches = [self.schema(_required(f.schema), ignore_optional=True) for f in s.fields]
            return ["null", *branches] if s.optional else branches
        if s.type is Type.STRUCT:
            full = self.full_name(s.name)
            if full in self.defined:
                return full
            self.defined.add(full)
            namespace, _, name = full.rpartition(".")
            out: dict[str, Any] = {"type": "record", "name": name}
            if namespace:
                out["namespace"] = namespace
            out["fields"] = [self.field(f) for f in s.fields]
            return self.annotate(out, s)
        if s.type is Type.ARRAY:
            assert s.value is not None
            return self.annotate({"type": "array", "items": self.schema(s.value)}, s)
        if s.type is Type.MAP:
            assert s.key is not None and s.value is not None
            if s.key.type is Type.STRING and not s.key.optional:
                return self.annotate({"type": "map", "values": self.schema(s.value)}, s)
            full = self.full_name(s.name) if s.name else f"{NAMESPACE}.{MAP_ENTRY}"
            if full in self.defined:
                entry: AvroSchema = full
            else:
                self.defined.add(full)
                namespace, _, name = full.rpartition(".")
                entry = {
                    "type": "record",
                    "name": name,
                    "namespace": namespace,
                    "fields": [
                        self.field(Field("key", s.key)),
                        self.field(Field("value", s.value)),
                    ],
                }
                if s.name:
                    entry["connect.internal.type"] = MAP_ENTRY
            return self.annotate({"type": "array", "items": entry}, s)
        out = {"type": _PRIMITIVES[s.type]}
        if s.name == DECIMAL:
            params = s.parameters or {}
            scale = int(params.get("scale", "0"))
            precision = int(params.get(PRECISION_PARAM, DEFAULT_PRECISION))
            out["scale"], out["precision"] = scale, precision
            if 0 <= scale <= precision:
                out["logicalType"] = "decimal"
        elif s.name in _LOGICAL:
            out["logicalType"] = _LOGICAL[s.name]
        if s.type in (Type.INT8, Type.INT16) and self.meta:
            out["connect.type"] = s.type.value
        return self.annotate(out, s)

    def annotate(self, out: dict[str, Any], s: Schema) -> AvroSchema:
        if self.meta:
            if s.doc is not None:
                out["connect.doc"] = s.doc
            if s.version is not None:
                out["connect.version"] = s.version
            if s.parameters:
                out["connect.parameters"] = dict(s.parameters)
            if s.default is not None:
                out["connect.default"] = _avro_default(s, s.default)
            if s.name is not None:
                out["connect.name"] = s.name
        keys = list(out)
        if keys == ["type"]:
            return out["type"]  # a bare primitive is written as its name
        return out

    def field(self, f: Field) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.scrub_name(f.name), "type": self.schema(f.schema)}
        if f.schema.default is not None:
            out["default"] = _avro_default(f.schema, f.schema.default)
        elif f.schema.optional:
            out["default"] = None
        return out

    def full_name(self, name: str | None) -> str:
        if name is None:
            self.unnamed += 1
            suffix = str(self.unnamed) if self.unnamed > 1 else ""
            return f"{NAMESPACE}.{DEFAULT_NAME}{suffix}"
        if not self.scrub:
            return name
        return ".".join(self.scrub_name(part) for part in name.split("."))

    def scrub_name(self, name: str) -> str:
        if not self.scrub or _NAME_OK.fullmatch(name):
            return name
        encoded = quote(name, safe="")
        if encoded[:1].isdigit():
            encoded = "x" + encoded
        return re.sub(r"[^A-Za-z0-9_]", "_", encoded)


def _required(s: Schema) -> Schema:
    if not s.optional:
        return s
    return Schema(s.type, False, s.name, s.version, s.doc, s.default, s.parameters, s.fields,
                  s.key, s.value)  # fmt: skip


def _avro_default(s: Schema, value: Any) -> Any:
    """A default value as Avro's JSON encoding of it (bytes as ISO-8859-1 text)."""
    if value is None:
        return None
    if s.name == DECIMAL:
        from hub.api._decimal import decimal_to_bytes

        return decimal_to_bytes(value, s).decode("latin-1")
    if s.name in (DATE, TIME, TIMESTAMP):
        from hub.api._decimal import temporal_to_int

        return temporal_to_int(s.name, value)
    if s.type is Type.BYTES:
        return bytes(value).decode("latin-1")
    if s.type is Type.STRUCT and isinstance(value, dict):
        return {f.name: _avro_default(f.schema, value.get(f.name)) for f in s.fields}
    if s.type is Type.ARRAY and isinstance(value, list):
        assert s.value is not None
        return [_avro_default(s.value, v) for v in value]
    if s.type is Type.MAP and isinstance(value, dict):
        assert s.value is not None
        return {str(k): _avro_default(s.value, v) for k, v in value.items()}
    return value


def avro_schema(schema: Schema, *, meta: bool = True, scrub_names: bool = False) -> AvroSchema:
    """The Avro schema (JSON-ready) Confluent's AvroData makes of a Connect schema."""
    return _ToAvro(meta, scrub_names).schema(schema)


# -- Avro -> Connect schema --------------------------------------------------------------------


class _ToConnect:
    def __init__(self, named: dict[str, Any]) -> None:
        self.named = named  # full name -> Avro definition (from references and this schema)
        self.done: dict[str, Schema] = {}

    def schema(self, node: Any, namespace: str = "", optional: bool = False,
               default: Any = None, version: int | None = None) -> Schema:  # fmt: skip
        if isinstance(node, str):
            full = node if "." in node or node in _AVRO_PRIMITIVES else _join(namespace, node)
            if node in _AVRO_PRIMITIVES:
                return self.primitive({"type": node}, optional, default)
            if full in self.done and not optional:
                return self.done[full]
            target = self.named.get(full) or self.named.get(node)
            if target is None:
                raise DataError(f"Avro schema refers to unknown type {node!r}")
            return self.schema(target, namespace, optional, default)
        if isinstance(node, list):
            return self.union(node, namespace, optional, default)
        kind = node.get("type")
        if isinstance(kind, dict | list) or (isinstance(kind, str) and kind not in _COMPLEX
                                             and kind not in _AVRO_PRIMITIVES):  # fmt: skip
            return self.schema(kind, namespace, optional, default)
        if kind == "record":
            return self.record(node, namespace, optional, default, version)
        if kind == "enum":
            full = _join(node.get("namespace", namespace), node["name"])
            params = {ENUM_PARAM: full, **{f"{ENUM_PARAM}.{s}": s for s in node["symbols"]}}
            return self.finish(Schema(Type.STRING, parameters=params), node, optional, default,
                               name=full)  # fmt: skip
        if kind == "fixed":
            full = _join(node.get("namespace", namespace), node["name"])
            base = self.primitive(node, optional, default)
            params = {**(base.parameters or {}), FIXED_SIZE_PARAM: str(node["size"])}
            name = base.name if base.name == DECIMAL else full
            return _with(base, parameters=params, name=name)
        if kind == "array":
            items = node["items"]
            entry = self.named.get(items) if isinstance(items, str) else items
            if isinstance(entry, dict) and _is_map_entry(entry):
                fields = {f["name"]: f["type"] for f in entry["fields"]}
                ns = entry.get("namespace", namespace)
                value: Schema = Schema(Type.MAP, key=self.schema(fields["key"], ns),
                                       value=self.schema(fields["value"], ns))  # fmt: skip
            else:
                value = Schema(Type.ARRAY, value=self.schema(items, namespace))
            return self.finish(value, node, optional, default)
        if kind == "map":
            value = Schema(Type.MAP, key=Schema(Type.STRING),
                           value=self.schema(node["values"], namespace))  # fmt: skip
            return self.finish(value, node, optional, default)
        return self.primitive(node, optional, default)

    def primitive(self, node: dict[str, Any], optional: bool, default: Any) -> Schema:
        kind, logical = node["type"], node.get("logicalType")
        if kind in ("bytes", "fixed") and logical == "decimal":
            params = {"scale": str(int(node.get("scale", 0)))}
            precision = node.get("precision")
            if precision is not None and int(precision) != DEFAULT_PRECISION:
                params[PRECISION_PARAM] = str(int(precision))
            base = Schema(Type.BYTES, name=DECIMAL, version=1, parameters=params)
        elif kind == "int" and logical == "date":
            base = Schema(Type.INT32, name=DATE, version=1)
        elif kind == "int" and logical == "time-millis":
            base = Schema(Type.INT32, name=TIME, version=1)
        elif kind == "long" and logical == "timestamp-millis":
            base = Schema(Type.INT64, name=TIMESTAMP, version=1)
        elif kind == "int" and node.get("connect.type") in ("int8", "int16"):
            base = Schema(Type(node["connect.type"]))
        elif kind == "null":
            raise DataError("standalone null schemas have no Connect equivalent")
        else:
            base = Schema(_CONNECT_PRIMITIVES["bytes" if kind == "fixed" else kind])
        return self.finish(base, node, optional, default)

    def record(self, node: dict[str, Any], namespace: str, optional: bool, default: Any,
               version: int | None) -> Schema:  # fmt: skip
        ns = node.get("namespace", namespace if "." not in node["name"] else "")
        full = _join(ns, node["name"])
        if not optional and full in self.done:
            return self.done[full]
        self.named.setdefault(full, node)
        inner_ns = full.rpartition(".")[0]
        fields = []
        for f in node["fields"]:
            fdefault = f.get("default", _MISSING)
            fields.append(
                Field(
                    f["name"],
                    self.schema(
                        f["type"], inner_ns, default=None if fdefault is _MISSING else fdefault
                    ),
                )
            )
        name = full if not full.startswith(f"{NAMESPACE}.{DEFAULT_NAME}") else None
        base = Schema(Type.STRUCT, fields=tuple(fields), version=version)
        result = self.finish(base, node, optional, default, name=name)
        if not optional:
            self.done[full] = result
        return result

    def union(self, branches: list[Any], namespace: str, optional: bool, default: Any) -> Schema:
        others = [b for b in branches if b != "null" and b != {"type": "null"}]
        if len(others) == 1 and len(branches) == 2:
            return self.schema(others[0], namespace, optional=True, default=default)
        if len(branches) == 1:
            return self.schema(branches[0], namespace, optional, default)
        fields = []
        for branch in others:
            member = self.schema(branch, namespace, optional=True)
            fields.append(Field(_branch_name(branch, member), member))
        return Schema(Type.STRUCT, optional=optional or len(others) < len(branches),
                      name=UNION_NAME, fields=tuple(fields))  # fmt: skip

    def finish(self, s: Schema, node: dict[str, Any], optional: bool, default: Any,
               name: str | None = None) -> Schema:  # fmt: skip
        params = dict(s.parameters or {})
        params.update({str(k): str(v) for k, v in (node.get("connect.parameters") or {}).items()})
        connect_name = node.get("connect.name")
        version = node.get("connect.version", s.version)
        if default is None and "connect.default" in node:
            default = node["connect.default"]
        result = _with(
            s, optional=optional or s.optional, name=connect_name or name or s.name,
            version=int(version) if version is not None else None,
            doc=node.get("connect.doc", s.doc), parameters=params or None,
        )  # fmt: skip
        if default is not None:
            result = _with(result, default=_connect_default(result, default))
        return result


_MISSING = object()
_AVRO_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes",
                              "string"})  # fmt: skip
_COMPLEX = frozenset({"record", "enum", "array", "map", "fixed"})
_CONNECT_PRIMITIVES = {
    "boolean": Type.BOOLEAN, "int": Type.INT32, "long": Type.INT64, "float": Type.FLOAT32,
    "double": Type.FLOAT64, "bytes": Type.BYTES, "string": Type.STRING,
}  # fmt: skip


def _join(namespace: str, name: str) -> str:
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _is_map_entry(node: dict[str, Any]) -> bool:
    names = [f.get("name") for f in node.get("fields", [])]
    full = _join(node.get("namespace", ""), node.get("name", ""))
    return names == ["key", "value"] and (
        full == f"{NAMESPACE}.{MAP_ENTRY}" or node.get("connect.internal.type") == MAP_ENTRY
    )


def _branch_name(branch: Any, member: Schema) -> str:
    if isinstance(branch, dict) and branch.get("type") in ("record", "enum", "fixed"):
        return str(branch["name"])
    if isinstance(branch, str) and branch not in _AVRO_PRIMITIVES:
        return branch.rpartition(".")[2]
    return member.type.value if member.type not in (Type.FLOAT32, Type.FLOAT64) else (
        "float" if member.type is Type.FLOAT32 else "double")  # fmt: skip


def _with(s: Schema, **changes: Any) -> Schema:
    values = {k: getattr(s, k) for k in ("type", "optional", "name", "version", "doc", "default",
                                         "parameters", "fields", "key", "value")}  # fmt: skip
    values.update(changes)
    return Schema(**values)


def _connect_default(s: Schema, value: Any) -> Any:
    """An Avro JSON default as a Connect value."""
    if value is None:
        return None
    if s.name == DECIMAL and isinstance(value, str):
        unscaled = int.from_bytes(value.encode("latin-1"), "big", signed=True)
        return decimal.Decimal(unscaled).scaleb(-int((s.parameters or {}).get("scale", "0")))
    if s.type is Type.BYTES and isinstance(value, str):
        return value.encode("latin-1")
    return value


def connect_schema(
    schema: AvroSchema, named: dict[str, Any] | None = None, version: int | None = None
) -> Schema:
    """The Connect schema of an Avro schema; ``named`` holds referenced named types by full
    name; ``version`` (the registry's) applies when the schema has no ``connect.version``."""
    return _ToConnect(dict(named or {})).schema(schema, version=version)


# Value conversions live in ``hub.api._avro_values``; re-exported here as the public names.
from hub.api._avro_values import avro_writer, connect_reader  # noqa: E402

__all__ = ["avro_schema", "avro_writer", "connect_reader", "connect_schema"]
