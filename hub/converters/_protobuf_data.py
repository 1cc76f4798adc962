"""Connect schemas <-> Protobuf (``.proto`` text / descriptors), after Confluent's
``ProtobufData``, and the value walks between Connect data and dynamic messages.

Connect -> Protobuf: a struct becomes a proto3 message named after the last part of the
schema name (``ConnectDefault1``... when unnamed), in the package of the name's other parts;
fields are numbered by position (1, 2, ...). int8/int16/int32 -> int32 (the Connect type kept
in ``(confluent.field_meta).params["connect.type"]``), int64 -> int64, float32 -> float,
float64 -> double, boolean -> bool, string, bytes; arrays -> ``repeated``; maps with scalar
keys -> ``map<K, V>``; nested structs -> nested messages. Logical types: Decimal ->
``confluent.type.Decimal`` (scale and precision in the field's meta params), Date ->
``google.type.Date``, Time -> ``google.type.TimeOfDay``, Timestamp ->
``google.protobuf.Timestamp``. Optional primitives are plain proto3 fields, as Confluent's
default: a null is simply not set and reads back as the type's zero value.

Protobuf -> Connect reads any message: scalars as above (uint32 -> int64, enums -> string),
messages -> optional structs named ``package.Message``, repeated -> array, map -> map, the
well-known and Confluent types above -> the logical types, ``google.protobuf.*Value``
wrappers -> optional primitives.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

from google.protobuf import unknown_fields
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from hub.api import DataError, Field, Schema, Type
from hub.api.schema import DATE, DECIMAL, TIME, TIMESTAMP

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_SCALAR = {Type.INT8: "int32", Type.INT16: "int32", Type.INT32: "int32", Type.INT64: "int64",
           Type.FLOAT32: "float", Type.FLOAT64: "double", Type.BOOLEAN: "bool",
           Type.STRING: "string", Type.BYTES: "bytes"}  # fmt: skip
_LOGICAL = {
    DECIMAL: ("confluent.type.Decimal", "confluent/type/decimal.proto"),
    DATE: ("google.type.Date", "google/type/date.proto"),
    TIME: ("google.type.TimeOfDay", "google/type/timeofday.proto"),
    TIMESTAMP: ("google.protobuf.Timestamp", "google/protobuf/timestamp.proto"),
}
_META_FIELD = 1088  # (confluent.field_meta)
_WRAPPERS = {
    "DoubleValue": Type.FLOAT64, "FloatValue": Type.FLOAT32, "Int64Value": Type.INT64,
    "UInt64Value": Type.INT64, "Int32Value": Type.INT32, "UInt32Value": Type.INT64,
    "BoolValue": Type.BOOLEAN, "StringValue": Type.STRING, "BytesValue": Type.BYTES,
}  # fmt: skip


# -- Connect schema -> .proto ------------------------------------------------------------------


def proto_text(schema: Schema) -> tuple[str, str]:
    """(.proto text, full name of the top message) for a struct schema."""
    if schema.type is not Type.STRUCT:
        raise DataError("the ProtobufConverter writes structs only (a message per record)")
    full = schema.name or "ConnectDefault1"
    package, _, name = full.rpartition(".")
    imports: set[str] = set()
    body = _message(schema, _ident(name), imports, "")
    head = ['syntax = "proto3";']
    if package:
        head.append(f"package {'.'.join(_ident(p) for p in package.split('.'))};")
    head += [f'import "{i}";' for i in sorted(imports)]
    return "\n".join(head + body) + "\n", (f"{package}." if package else "") + _ident(name)


def _message(schema: Schema, name: str, imports: set[str], indent: str) -> list[str]:
    lines = [f"{indent}message {name} {{"]
    nested: list[str] = []
    for number, field in enumerate(schema.fields, start=1):
        lines.append(indent + "  " + _field(field, number, imports, nested, indent + "  "))
    lines += nested
    lines.append(f"{indent}}}")
    return lines


def _field(field: Field, number: int, imports: set[str], nested: list[str], indent: str) -> str:
    s, label = field.schema, ""
    if s.type is Type.ARRAY:
        assert s.value is not None
        if s.value.type in (Type.ARRAY, Type.MAP):
            raise DataError(f"field {field.name!r}: Protobuf has no nested repeated fields")
        s, label = s.value, "repeated "
    options: dict[str, str] = {}
    kind = _type(field.name, s, imports, nested, indent, options)
    suffix = ""
    if options:
        imports.add("confluent/meta.proto")
        params = ", ".join(f'{{key: "{k}", value: "{v}"}}' for k, v in options.items())
        suffix = f" [(confluent.field_meta) = {{params: [{params}]}}]"
    return f"{label}{kind} {_ident(field.name)} = {number}{suffix};"


def _type(name: str, s: Schema, imports: set[str], nested: list[str], indent: str,
          options: dict[str, str]) -> str:  # fmt: skip
    if s.name in _LOGICAL:
        proto_type, location = _LOGICAL[s.name]
        imports.add(location)
        if s.name == DECIMAL:
            params = s.parameters or {}
            options["scale"] = params.get("scale", "0")
            if "connect.decimal.precision" in params:
                options["precision"] = params["connect.decimal.precision"]
        return proto_type
    if s.type in (Type.INT8, Type.INT16):
        options["connect.type"] = s.type.value
    if s.type in _SCALAR:
        return _SCALAR[s.type]
    if s.type is Type.MAP:
        assert s.key is not None and s.value is not None
        if s.key.type not in _SCALAR or s.key.type in (Type.FLOAT32, Type.FLOAT64, Type.BYTES):
            raise DataError(f"field {name!r}: Protobuf map keys must be integers, bool or string")
        value = _type(name, s.value, imports, nested, indent, {})
        return f"map<{_SCALAR[s.key.type]}, {value}>"
    if s.type is Type.STRUCT:
        message = _ident((s.name or name).rpartition(".")[2])
        message = message[:1].upper() + message[1:]
        if not any(line.strip() == f"message {message} {{" for line in nested):
            nested += _message(s, message, imports, indent)
        return message
    raise DataError(f"field {name!r}: no Protobuf type for {s.type.value}")


def _ident(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return out if out and not out[0].isdigit() else f"_{out}"


# -- descriptor -> Connect schema --------------------------------------------------------------


def connect_schema(message: Descriptor, version: int | None = None) -> Schema:
    return _struct(message, optional=False, version=version, seen={})


def _struct(message: Descriptor, optional: bool, version: int | None,
            seen: dict[str, Schema]) -> Schema:  # fmt: skip
    if message.full_name in seen:
        return seen[message.full_name]
    fields = tuple(Field(f.name, _field_schema(f, seen)) for f in message.fields)
    schema = Schema(Type.STRUCT, optional=optional, name=message.full_name, version=version,
                    fields=fields)  # fmt: skip
    if not optional:
        seen[message.full_name] = schema
    return schema


def _field_schema(f: FieldDescriptor, seen: dict[str, Schema]) -> Schema:
    params = field_params(f)
    if f.message_type is not None and f.message_type.GetOptions().map_entry:
        key, value = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
        return Schema(Type.MAP, optional=True, key=_single(key, {}, seen),
                      value=_single(value, field_params(value), seen))  # fmt: skip
    if _repeated(f):
        return Schema(Type.ARRAY, optional=True, value=_single(f, params, seen))
    return _single(f, params, seen)


def _single(f: FieldDescriptor, params: dict[str, str], seen: dict[str, Schema]) -> Schema:
    if f.type == FieldDescriptor.TYPE_MESSAGE:
        full = f.message_type.full_name
        if full == "confluent.type.Decimal":
            out = {"scale": params.get("scale", "0")}
            if "precision" in params:
                out["connect.decimal.precision"] = params["precision"]
            return Schema(Type.BYTES, optional=True, name=DECIMAL, version=1, parameters=out)
        if full == "google.type.Date":
            return Schema(Type.INT32, optional=True, name=DATE, version=1)
        if full == "google.type.TimeOfDay":
            return Schema(Type.INT32, optional=True, name=TIME, version=1)
        if full == "google.protobuf.Timestamp":
            return Schema(Type.INT64, optional=True, name=TIMESTAMP, version=1)
        if full.startswith("google.protobuf.") and f.message_type.name in _WRAPPERS:
            return Schema(_WRAPPERS[f.message_type.name], optional=True)
        return _struct(f.message_type, optional=True, version=None, seen=seen)
    if f.type == FieldDescriptor.TYPE_ENUM:
        return Schema(Type.STRING, optional=f.has_presence)
    kind = _BY_PROTO[f.type]
    if kind is Type.INT32 and params.get("connect.type") in ("int8", "int16"):
        kind = Type(params["connect.type"])
    return Schema(kind, optional=f.has_presence)


_BY_PROTO = {
    FieldDescriptor.TYPE_INT32: Type.INT32, FieldDescriptor.TYPE_SINT32: Type.INT32,
    FieldDescriptor.TYPE_SFIXED32: Type.INT32, FieldDescriptor.TYPE_UINT32: Type.INT64,
    FieldDescriptor.TYPE_FIXED32: Type.INT64, FieldDescriptor.TYPE_INT64: Type.INT64,
    FieldDescriptor.TYPE_SINT64: Type.INT64, FieldDescriptor.TYPE_SFIXED64: Type.INT64,
    FieldDescriptor.TYPE_UINT64: Type.INT64, FieldDescriptor.TYPE_FIXED64: Type.INT64,
    FieldDescriptor.TYPE_FLOAT: Type.FLOAT32, FieldDescriptor.TYPE_DOUBLE: Type.FLOAT64,
    FieldDescriptor.TYPE_BOOL: Type.BOOLEAN, FieldDescriptor.TYPE_STRING: Type.STRING,
    FieldDescriptor.TYPE_BYTES: Type.BYTES,
}  # fmt: skip


def _repeated(f: FieldDescriptor) -> bool:
    flag = getattr(f, "is_repeated", None)
    return bool(flag if flag is not None else f.label == FieldDescriptor.LABEL_REPEATED)


def field_params(f: FieldDescriptor) -> dict[str, str]:
    """``(confluent.field_meta).params`` of a field, read from the raw options (the extension
    need not be known to the message's descriptor pool)."""
    options = f.GetOptions()
    out: dict[str, str] = {}
    for fd, value in options.ListFields():  # the extension is known to this process
        if fd.is_extension and fd.number == _META_FIELD:
            out.update({str(k): str(v) for k, v in value.params.items()})
    for item in unknown_fields.UnknownFieldSet(options):  # or only its bytes are
        if item.field_number == _META_FIELD and isinstance(item.data, bytes):
            out.update(_meta_params(item.data))
    return out


def _meta_params(data: bytes) -> dict[str, str]:
    """Decodes ``confluent.Meta.params`` (field 2, map<string,string>) from its wire bytes."""
    params: dict[str, str] = {}
    for number, value in _wire_fields(data):
        if number == 2 and isinstance(value, bytes):
            entry = dict(_wire_fields(value))
            key, val = entry.get(1, b""), entry.get(2, b"")
            if isinstance(key, bytes) and isinstance(val, bytes):
                params[key.decode()] = val.decode()
    return params


def _wire_fields(data: bytes) -> list[tuple[int, bytes | int]]:
    out: list[tuple[int, bytes | int]] = []
    i = 0
    while i < len(data):
        tag, i = _varint(data, i)
        number, wire = tag >> 3, tag & 7
        if wire == 2:
            length, i = _varint(data, i)
            out.append((number, data[i : i + length]))
            i += length
        elif wire == 0:
            value, i = _varint(data, i)
            out.append((number, value))
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            break
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i
        shift += 7


# -- values ------------------------------------------------------------------------------------

Fill = Callable[[Any, Any], None]


def fill(message: Any, schema: Schema, value: dict[str, Any]) -> None:
    """Sets ``message``'s fields from a Connect struct value."""
    fields = message.DESCRIPTOR.fields_by_name
    for field in schema.fields:
        v = value.get(field.name)
        if v is None:
            continue
        name = _ident(field.name)
        descriptor = fields[name]
        s = field.schema
        if s.type is Type.ARRAY:
            assert s.value is not None
            target = getattr(message, name)
            for item in v:
                if descriptor.type == FieldDescriptor.TYPE_MESSAGE:
                    _set_message(target.add(), s.value, item)
                else:
                    target.append(item)
        elif s.type is Type.MAP:
            assert s.value is not None
            target = getattr(message, name)
            for k, item in v.items():
                if s.value.type is Type.STRUCT or s.value.name in _LOGICAL:
                    _set_message(target[k], s.value, item)
                else:
                    target[k] = item
        elif descriptor.type == FieldDescriptor.TYPE_MESSAGE:
            sub = getattr(message, name)
            sub.SetInParent()
            _set_message(sub, s, v)
        else:
            try:
                setattr(message, name, v)
            except (TypeError, ValueError) as exc:
                raise DataError(f"field {field.name!r}: {exc}") from None


def _set_message(sub: Any, s: Schema, v: Any) -> None:
    if s.name == TIMESTAMP:
        sub.FromDatetime(v if isinstance(v, dt.datetime) else _EPOCH + dt.timedelta(milliseconds=v))
    elif s.name == DATE:
        day = v if isinstance(v, dt.date) else dt.date(1970, 1, 1) + dt.timedelta(days=v)
        sub.year, sub.month, sub.day = day.year, day.month, day.day
    elif s.name == TIME:
        t = v if isinstance(v, dt.time) else (dt.datetime.min + dt.timedelta(milliseconds=v)).time()
        sub.hours, sub.minutes, sub.seconds = t.hour, t.minute, t.second
        sub.nanos = t.microsecond * 1000
    elif s.name == DECIMAL:
        scale = int((s.parameters or {}).get("scale", "0"))
        unscaled = int(decimal.Decimal(str(v)).scaleb(scale))
        length = max(1, (unscaled + (unscaled < 0)).bit_length() // 8 + 1)
        sub.value = unscaled.to_bytes(length, "big", signed=True)
        sub.scale = scale
        precision = (s.parameters or {}).get("connect.decimal.precision")
        if precision:
            sub.precision = int(precision)
    else:
        fill(sub, s, v)


def read(message: Any, schema: Schema) -> dict[str, Any]:
    """A Connect struct value from a message, per the schema ``connect_schema`` gave it."""
    out: dict[str, Any] = {}
    descriptors = message.DESCRIPTOR.fields_by_name
    for field in schema.fields:
        s = field.schema
        value = getattr(message, field.name)
        enum = descriptors[field.name].enum_type
        if enum is not None:
            names = enum.values_by_number
            if s.type is Type.ARRAY:
                out[field.name] = [names[v].name if v in names else str(v) for v in value]
            else:
                out[field.name] = names[value].name if value in names else str(value)
            continue
        if s.type is Type.ARRAY:
            assert s.value is not None
            inner = s.value
            out[field.name] = [_get(inner, v) for v in value]
        elif s.type is Type.MAP:
            assert s.value is not None
            inner = s.value
            out[field.name] = {k: _get(inner, v) for k, v in value.items()}
        elif (
            s.type is Type.STRUCT
            or s.name in _LOGICAL
            or (s.optional and message.DESCRIPTOR.fields_by_name[field.name].has_presence)
        ):
            out[field.name] = _get(s, value) if message.HasField(field.name) else None
        else:
            out[field.name] = _get(s, value)
    return out


def _get(s: Schema, v: Any) -> Any:
    if s.name == TIMESTAMP:
        return v.ToDatetime(tzinfo=dt.UTC)
    if s.name == DATE:
        return dt.date(v.year, v.month, v.day)
    if s.name == TIME:
        return dt.time(v.hours, v.minutes, v.seconds, v.nanos // 1000)
    if s.name == DECIMAL:
        unscaled = int.from_bytes(v.value, "big", signed=True) if v.value else 0
        return decimal.Decimal(unscaled).scaleb(-v.scale)
    if s.type is Type.STRUCT:
        return read(v, s)
    if s.type is Type.STRING and not isinstance(v, str):
        return str(v)
    if hasattr(v, "value") and not isinstance(v, int | float | str | bytes | bool):
        return v.value  # a google.protobuf wrapper
    return v
