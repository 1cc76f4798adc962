"""Connect data <-> JSON-ready Python values, following Kafka Connect's JsonConverter rules.

* bytes are base64 strings; Decimal is base64 of its unscaled bytes (``decimal.format=BASE64``,
  the default) or a JSON number (``NUMERIC``); Timestamp/Date/Time are their int encodings.
* maps with non-optional string keys are JSON objects, other maps arrays of ``[key, value]``.
* a null for a field with a default becomes the default (``replace.null.with.default``); a null
  for a required field without one is a DataError, as is a value of the wrong JSON type:
  reading validates while walking, which costs nothing extra.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
from typing import Any

from hub.api import DataError
from hub.api.schema import DECIMAL, Schema, Type
from hub.converters import logical

INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
FLOATS = (Type.FLOAT32, Type.FLOAT64)
# Stand-in for a NUMERIC decimal: json.dumps cannot write a Decimal exactly, so the converter
# swaps these markers for the number's text after dumping.
NUMERIC_MARK = "\x00decimal:"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def object_mode(schema: Schema) -> bool:
    key = schema.key
    return key is not None and key.type is Type.STRING and not key.optional


def schemaless_default(value: Any) -> Any:
    """``json.dumps`` fallback for values without a schema that JSON has no type for."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def encode(schema: Schema, value: Any, *, numeric_decimals: bool, replace_null: bool) -> Any:
    """A Connect value with ``schema`` as a JSON-ready value."""
    if value is None:
        if replace_null and schema.default is not None:
            value = schema.default
        elif schema.optional:
            return None
        else:
            raise DataError(
                f"null value for a required {schema.type.value} field without a default"
            )
    if schema.name == DECIMAL and numeric_decimals:
        if isinstance(value, bytes | bytearray):
            value = logical.bytes_to_decimal(bytes(value), schema)
        return NUMERIC_MARK + str(decimal.Decimal(value))
    value = logical.to_wire(schema, value)
    kind = schema.type
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]
        if not _is_int(value) or not low <= value <= high:
            raise DataError(f"{value!r} is not a valid {kind.value}")
        return value
    if kind in FLOATS:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise DataError(f"{value!r} is not a valid {kind.value}")
        return float(value)
    if kind is Type.BOOLEAN:
        if not isinstance(value, bool):
            raise DataError(f"{value!r} is not a boolean")
        return value
    if kind is Type.STRING:
        if not isinstance(value, str):
            raise DataError(f"{value!r} is not a string")
        return value
    if kind is Type.BYTES:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise DataError(f"{type(value).__name__} value for a bytes schema")
        return base64.b64encode(bytes(value)).decode("ascii")
    kw: dict[str, Any] = {"numeric_decimals": numeric_decimals, "replace_null": replace_null}
    if kind is Type.ARRAY:
        assert schema.value is not None
        if not isinstance(value, list | tuple):
            raise DataError(f"{type(value).__name__} value for an array schema")
        return [encode(schema.value, v, **kw) for v in value]
    if kind is Type.MAP:
        assert schema.key is not None and schema.value is not None
        if not isinstance(value, dict):
            raise DataError(f"{type(value).__name__} value for a map schema")
        ks, vs = schema.key, schema.value
        pairs = [(encode(ks, k, **kw), encode(vs, v, **kw)) for k, v in value.items()]
        return dict(pairs) if object_mode(schema) else [list(p) for p in pairs]
    if not isinstance(value, dict):
        raise DataError(f"{type(value).__name__} value for a struct schema")
    out = {}
    for f in schema.fields:
        try:
            out[f.name] = encode(f.schema, value.get(f.name), **kw)
        except DataError as exc:
            raise DataError(f"field {f.name!r}: {exc}") from None
    return out


def decode(schema: Schema, node: Any) -> Any:
    """A JSON value read under ``schema`` as a Connect value (logical types decoded)."""
    if node is None:
        if schema.default is not None:
            return schema.default
        if schema.optional:
            return None
        raise DataError(f"invalid null value for a required {schema.type.value} field")
    kind = schema.type
    if kind in INT_RANGES:
        if not _is_int(node):
            raise DataError(f"expected {kind.value}, got {node!r}")
        return logical.from_wire(schema, node)
    if kind in FLOATS:
        if not isinstance(node, int | float) or isinstance(node, bool):
            raise DataError(f"expected {kind.value}, got {node!r}")
        return float(node)
    if kind is Type.BOOLEAN:
        if not isinstance(node, bool):
            raise DataError(f"expected boolean, got {node!r}")
        return node
    if kind is Type.STRING:
        if not isinstance(node, str):
            raise DataError(f"expected string, got {node!r}")
        return node
    if kind is Type.BYTES:
        if schema.name == DECIMAL and isinstance(node, int | float) and not isinstance(node, bool):
            return decimal.Decimal(str(node))
        if not isinstance(node, str):
            raise DataError(f"expected base64 bytes, got {node!r}")
        try:
            data = base64.b64decode(node, validate=True)
        except binascii.Error:
            raise DataError(f"invalid base64 for a bytes field: {node[:40]!r}") from None
        return logical.from_wire(schema, data)
    if kind is Type.ARRAY:
        assert schema.value is not None
        if not isinstance(node, list):
            raise DataError(f"expected array, got {type(node).__name__}")
        return [decode(schema.value, v) for v in node]
    if kind is Type.MAP:
        assert schema.key is not None and schema.value is not None
        if isinstance(node, dict):
            return {decode(schema.key, k): decode(schema.value, v) for k, v in node.items()}
        if not isinstance(node, list) or not all(isinstance(p, list) and len(p) == 2 for p in node):
            raise DataError("maps must be JSON objects or arrays of [key, value] pairs")
        return {decode(schema.key, k): decode(schema.value, v) for k, v in node}
    if not isinstance(node, dict):
        raise DataError(f"structs must be JSON objects, got {type(node).__name__}")
    out = {}
    for f in schema.fields:
        try:
            out[f.name] = decode(f.schema, node.get(f.name))
        except DataError as exc:
            raise DataError(f"field {f.name!r}: {exc}") from None
    return out
