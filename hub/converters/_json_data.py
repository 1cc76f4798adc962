"""Connect data <-> JSON-ready Python values, following Kafka Connect's JsonConverter rules.

* bytes are base64 strings; Decimal is base64 of its unscaled bytes (``decimal.format=BASE64``,
  the default) or a JSON number (``NUMERIC``); Timestamp/Date/Time are their int encodings.
* maps with non-optional string keys are JSON objects, other maps arrays of ``[key, value]``.
* a null for a field with a default becomes the default (``replace.null.with.default``); a null
  for a required field without one is a DataError, as is a value of the wrong JSON type:
  reading validates while walking, which costs nothing extra.

Every record of a topic usually has the same schema, so ``encoder``/``decoder`` compile a
schema once into nested closures (no per-value dispatch on the schema type) and the converter
caches them per schema.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

from hub.api import DataError
from hub.api.schema import DATE, DECIMAL, TIME, TIMESTAMP, Schema, Type
from hub.converters import logical

Codec = Callable[[Any], Any]

INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
FLOATS = (Type.FLOAT32, Type.FLOAT64)
# Stand-in for a NUMERIC decimal: json cannot write a Decimal exactly, so the converter swaps
# these markers for the number's text after encoding.
NUMERIC_MARK = "\x00decimal:"
_TO_WIRE: dict[str, Codec] = {
    TIMESTAMP: logical.timestamp_to_millis,
    DATE: logical.date_to_days,
    TIME: logical.time_to_millis,
}
_FROM_WIRE: dict[str, Codec] = {
    TIMESTAMP: logical.millis_to_timestamp,
    DATE: logical.days_to_date,
    TIME: logical.millis_to_time,
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def object_mode(schema: Schema) -> bool:
    key = schema.key
    return key is not None and key.type is Type.STRING and not key.optional


def schemaless_default(value: Any) -> Any:
    """JSON encoder fallback for values without a schema that JSON has no type for."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


# -- writing ---------------------------------------------------------------------------------


def encoder(schema: Schema, *, numeric_decimals: bool, replace_null: bool) -> Codec:
    """A function turning a Connect value with ``schema`` into a JSON-ready value."""
    base = _base_encoder(schema, numeric_decimals, replace_null)
    default, optional, kind = schema.default, schema.optional, schema.type.value

    def encode(value: Any) -> Any:
        if value is None:
            if replace_null and default is not None:
                return base(default)
            if optional:
                return None
            raise DataError(f"null value for a required {kind} field without a default")
        return base(value)

    return encode


def _base_encoder(schema: Schema, numeric: bool, replace_null: bool) -> Codec:
    kind = schema.type
    if schema.name == DECIMAL:
        if numeric:
            return lambda v: (
                NUMERIC_MARK
                + str(
                    logical.bytes_to_decimal(bytes(v), schema)
                    if isinstance(v, bytes | bytearray)
                    else decimal.Decimal(v)
                )
            )
        plain = _base_encoder(Schema(kind), numeric, replace_null)
        return lambda v: plain(logical.decimal_to_bytes(v, schema))
    if schema.name in _TO_WIRE:
        wire, plain = _TO_WIRE[schema.name], _base_encoder(Schema(kind), numeric, replace_null)
        return lambda v: plain(wire(v))
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]

        def enc_int(v: Any) -> Any:
            if not _is_int(v) or not low <= v <= high:
                raise DataError(f"{v!r} is not a valid {kind.value}")
            return v

        return enc_int
    if kind in FLOATS:

        def enc_float(v: Any) -> Any:
            if not isinstance(v, int | float) or isinstance(v, bool):
                raise DataError(f"{v!r} is not a valid {kind.value}")
            return float(v)

        return enc_float
    if kind is Type.BOOLEAN:
        return _checker(bool, "a boolean")
    if kind is Type.STRING:
        return _checker(str, "a string")
    if kind is Type.BYTES:

        def enc_bytes(v: Any) -> Any:
            if not isinstance(v, bytes | bytearray | memoryview):
                raise DataError(f"{type(v).__name__} value for a bytes schema")
            return base64.b64encode(bytes(v)).decode("ascii")

        return enc_bytes
    kw = {"numeric_decimals": numeric, "replace_null": replace_null}
    if kind is Type.ARRAY:
        assert schema.value is not None
        item = encoder(schema.value, **kw)

        def enc_array(v: Any) -> Any:
            if not isinstance(v, list | tuple):
                raise DataError(f"{type(v).__name__} value for an array schema")
            return [item(x) for x in v]

        return enc_array
    if kind is Type.MAP:
        assert schema.key is not None and schema.value is not None
        enc_k, enc_v = encoder(schema.key, **kw), encoder(schema.value, **kw)
        as_object = object_mode(schema)

        def enc_map(v: Any) -> Any:
            if not isinstance(v, dict):
                raise DataError(f"{type(v).__name__} value for a map schema")
            if as_object:
                return {enc_k(k): enc_v(x) for k, x in v.items()}
            return [[enc_k(k), enc_v(x)] for k, x in v.items()]

        return enc_map
    fields = [(f.name, encoder(f.schema, **kw)) for f in schema.fields]

    def enc_struct(v: Any) -> Any:
        if not isinstance(v, dict):
            raise DataError(f"{type(v).__name__} value for a struct schema")
        out = {}
        for name, enc in fields:
            try:
                out[name] = enc(v.get(name))
            except DataError as exc:
                raise DataError(f"field {name!r}: {exc}") from None
        return out

    return enc_struct


def _checker(kind: type, what: str) -> Codec:
    def check(v: Any) -> Any:
        if not isinstance(v, kind):
            raise DataError(f"{v!r} is not {what}")
        return v

    return check


# -- reading ---------------------------------------------------------------------------------


def decoder(schema: Schema) -> Codec:
    """A function reading a JSON value under ``schema`` as a Connect value."""
    base = _base_decoder(schema)
    default, optional, kind = schema.default, schema.optional, schema.type.value

    def decode(node: Any) -> Any:
        if node is None:
            if default is not None:
                return default
            if optional:
                return None
            raise DataError(f"invalid null value for a required {kind} field")
        return base(node)

    return decode


def _base_decoder(schema: Schema) -> Codec:
    kind = schema.type
    if kind in INT_RANGES or kind in FLOATS:
        want_int = kind in INT_RANGES
        from_wire = _FROM_WIRE.get(schema.name or "")

        def dec_number(v: Any) -> Any:
            if isinstance(v, bool) or not isinstance(v, int if want_int else int | float):
                raise DataError(f"expected {kind.value}, got {v!r}")
            if from_wire is not None:
                return from_wire(v)
            return v if want_int else float(v)

        return dec_number
    if kind is Type.BOOLEAN:
        return _expect(bool, "boolean")
    if kind is Type.STRING:
        return _expect(str, "string")
    if kind is Type.BYTES:
        is_decimal = schema.name == DECIMAL

        def dec_bytes(v: Any) -> Any:
            if is_decimal and isinstance(v, int | float) and not isinstance(v, bool):
                return decimal.Decimal(str(v))
            if not isinstance(v, str):
                raise DataError(f"expected base64 bytes, got {v!r}")
            try:
                data = base64.b64decode(v, validate=True)
            except binascii.Error:
                raise DataError(f"invalid base64 for a bytes field: {v[:40]!r}") from None
            return logical.bytes_to_decimal(data, schema) if is_decimal else data

        return dec_bytes
    if kind is Type.ARRAY:
        assert schema.value is not None
        item = decoder(schema.value)

        def dec_array(v: Any) -> Any:
            if not isinstance(v, list):
                raise DataError(f"expected array, got {type(v).__name__}")
            return [item(x) for x in v]

        return dec_array
    if kind is Type.MAP:
        assert schema.key is not None and schema.value is not None
        dec_k, dec_v = decoder(schema.key), decoder(schema.value)

        def dec_map(v: Any) -> Any:
            if isinstance(v, dict):
                return {dec_k(k): dec_v(x) for k, x in v.items()}
            if not isinstance(v, list) or not all(isinstance(p, list) and len(p) == 2 for p in v):
                raise DataError("maps must be JSON objects or arrays of [key, value] pairs")
            return {dec_k(k): dec_v(x) for k, x in v}

        return dec_map
    fields = [(f.name, decoder(f.schema)) for f in schema.fields]

    def dec_struct(v: Any) -> Any:
        if not isinstance(v, dict):
            raise DataError(f"structs must be JSON objects, got {type(v).__name__}")
        out = {}
        for name, dec in fields:
            try:
                out[name] = dec(v.get(name))
            except DataError as exc:
                raise DataError(f"field {name!r}: {exc}") from None
        return out

    return dec_struct


def _expect(kind: type, what: str) -> Codec:
    def check(v: Any) -> Any:
        if not isinstance(v, kind):
            raise DataError(f"expected {what}, got {v!r}")
        return v

    return check


def encode(schema: Schema, value: Any, *, numeric_decimals: bool, replace_null: bool) -> Any:
    """One-off ``encoder(schema)(value)``; converters cache the compiled encoder instead."""
    return encoder(schema, numeric_decimals=numeric_decimals, replace_null=replace_null)(value)


def decode(schema: Schema, node: Any) -> Any:
    """One-off ``decoder(schema)(node)``."""
    return decoder(schema)(node)
