"""Connect values <-> fastavro datums, after Confluent's AvroData (``hub.api.avro_data``).

fastavro does the logical-type encoding itself (Decimal, date, time, datetime), so a Connect
value is an Avro datum as it is, except maps with non-string keys (entry records) and union
structs; ``avro_writer``/``connect_reader`` compile the few conversions a schema needs and are
None when a schema needs none, so the common case costs nothing per record.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from typing import Any

from hub.api.schema import DECIMAL, Schema, Type

UNION_NAME = "io.confluent.connect.avro.Union"
PRECISION_PARAM = "connect.decimal.precision"
DEFAULT_PRECISION = 64

Convert = Callable[[Any], Any]


def avro_writer(schema: Schema) -> Convert | None:
    """Connect value -> fastavro datum, or None when values pass unchanged (most schemas)."""
    return _writer(schema, set())


def _writer(s: Schema, seen: set[int]) -> Convert | None:
    if id(s) in seen:
        return None
    seen = seen | {id(s)}
    if s.name == DECIMAL:
        params = s.parameters or {}
        scale = int(params.get("scale", "0"))
        if not 0 <= scale <= int(params.get(PRECISION_PARAM, DEFAULT_PRECISION)):
            from hub.api._decimal import decimal_to_bytes

            return lambda v: decimal_to_bytes(v, s) if v is not None else None
        return lambda v: v if v is None or isinstance(v, decimal.Decimal) else (
            decimal.Decimal(str(v)) if not isinstance(v, bytes | bytearray) else
            decimal.Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-scale))  # fmt: skip
    if s.type is Type.STRUCT and s.name == UNION_NAME:
        names = [f.name for f in s.fields]
        inner = {f.name: _writer(f.schema, seen) for f in s.fields}

        def union(v: Any) -> Any:
            if v is None:
                return None
            for name in names:
                if v.get(name) is not None:
                    conv = inner[name]
                    return conv(v[name]) if conv else v[name]
            return None

        return union
    if s.type is Type.STRUCT:
        convs = [(f.name, c) for f in s.fields if (c := _writer(f.schema, seen)) is not None]
        if not convs:
            return None

        def struct(v: Any) -> Any:
            if not isinstance(v, dict):
                return v
            out = dict(v)
            for name, conv in convs:
                if out.get(name) is not None:
                    out[name] = conv(out[name])
            return out

        return struct
    if s.type is Type.ARRAY:
        assert s.value is not None
        item = _writer(s.value, seen)
        if item is None:
            return None
        return lambda v: [item(x) if x is not None else None for x in v] if v is not None else None
    if s.type is Type.MAP:
        assert s.key is not None and s.value is not None
        kc, vc = _writer(s.key, seen), _writer(s.value, seen)
        if s.key.type is Type.STRING and not s.key.optional:
            if vc is None:
                return None
            return lambda v: {k: vc(x) if x is not None else None for k, x in v.items()} if (
                v is not None) else None  # fmt: skip

        def entries(v: Any) -> Any:
            if v is None:
                return None
            return [
                {"key": kc(k) if kc and k is not None else k,
                 "value": vc(x) if vc and x is not None else x}
                for k, x in v.items()
            ]  # fmt: skip

        return entries
    return None


def connect_reader(schema: Schema) -> Convert | None:
    """fastavro datum (logical types already decoded) -> Connect value; None when identity."""
    return _reader(schema, set())


def _reader(s: Schema, seen: set[int]) -> Convert | None:
    if id(s) in seen:
        return None
    seen = seen | {id(s)}
    if s.name == DECIMAL:
        scale = int((s.parameters or {}).get("scale", "0"))
        return lambda v: decimal.Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-scale) if (
            isinstance(v, bytes | bytearray)) else v  # fmt: skip
    if s.type is Type.STRUCT and s.name == UNION_NAME:
        fields = list(s.fields)

        def union(v: Any) -> Any:
            if v is None:
                return None
            out: dict[str, Any] = {f.name: None for f in fields}
            for f in fields:
                if _fits(f.schema, v):
                    conv = _reader(f.schema, set())
                    out[f.name] = conv(v) if conv else v
                    break
            return out

        return union
    if s.type is Type.STRUCT:
        convs = [(f.name, c) for f in s.fields if (c := _reader(f.schema, seen)) is not None]
        if not convs:
            return None

        def struct(v: Any) -> Any:
            if not isinstance(v, dict):
                return v
            for name, conv in convs:
                if v.get(name) is not None:
                    v[name] = conv(v[name])
            return v

        return struct
    if s.type is Type.ARRAY:
        assert s.value is not None
        item = _reader(s.value, seen)
        if item is None:
            return None
        return lambda v: [item(x) if x is not None else None for x in v] if v is not None else None
    if s.type is Type.MAP:
        assert s.key is not None and s.value is not None
        kc, vc = _reader(s.key, seen), _reader(s.value, seen)
        if isinstance(s.key, Schema) and s.key.type is Type.STRING and not s.key.optional:
            if vc is None:
                return None
            return lambda v: {k: vc(x) if x is not None else None for k, x in v.items()}

        def pairs(v: Any) -> Any:
            if isinstance(v, dict):
                return v
            return {(kc(e["key"]) if kc else e["key"]): (vc(e["value"]) if vc else e["value"])
                    for e in v}  # fmt: skip

        return pairs
    return None


def _fits(s: Schema, v: Any) -> bool:
    kinds: dict[Type, type | tuple[type, ...]] = {
        Type.BOOLEAN: bool, Type.STRING: str, Type.BYTES: (bytes, bytearray),
        Type.FLOAT32: float, Type.FLOAT64: float, Type.STRUCT: dict, Type.MAP: dict,
        Type.ARRAY: list,
    }  # fmt: skip
    if s.type in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        return isinstance(v, int) and not isinstance(v, bool)
    return isinstance(v, kinds[s.type])
