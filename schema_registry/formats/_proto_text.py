"""``FileDescriptorProto`` -> ``.proto`` text, for schemas registered as serialized descriptors.

confluent-kafka's Python serializer registers a Protobuf schema as the base64 of its
``FileDescriptorProto``; Confluent's registry stores the equivalent ``.proto`` text instead,
and so does Sluice: this prints it. Type names are written fully qualified (``.pkg.Msg``),
which protoc accepts everywhere, so no scope resolution is needed to print.

The printer covers what descriptors of ordinary schemas hold (proto2/proto3, nested messages
and enums, maps, oneofs, proto3 ``optional``, defaults, reserved ranges and names, extension
ranges, extensions, services, options whose values are scalars, enums or messages of known
types). ``print_file`` returns None for anything else (editions, groups, options the Python
runtime cannot see); callers then keep the base64 form. Callers also re-parse the text and
compare descriptors before trusting it (``protobuf._text_for``), so a printing gap can only
lose the readable form, never a schema detail.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import descriptor_pb2, text_format, unknown_fields
from google.protobuf.descriptor import FieldDescriptor

FDP = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    FDP.TYPE_DOUBLE: "double", FDP.TYPE_FLOAT: "float", FDP.TYPE_INT64: "int64",
    FDP.TYPE_UINT64: "uint64", FDP.TYPE_INT32: "int32", FDP.TYPE_FIXED64: "fixed64",
    FDP.TYPE_FIXED32: "fixed32", FDP.TYPE_BOOL: "bool", FDP.TYPE_STRING: "string",
    FDP.TYPE_BYTES: "bytes", FDP.TYPE_UINT32: "uint32", FDP.TYPE_SFIXED32: "sfixed32",
    FDP.TYPE_SFIXED64: "sfixed64", FDP.TYPE_SINT32: "sint32", FDP.TYPE_SINT64: "sint64",
}  # fmt: skip
_MAX_FIELD = 536870911  # 2^29 - 1: "max" in reserved/extension ranges
_MAX_ENUM = 2147483647


class _Unprintable(Exception):
    pass


def print_file(fd: descriptor_pb2.FileDescriptorProto) -> str | None:
    try:
        return _File(fd).text()
    except _Unprintable:
        return None


class _File:
    def __init__(self, fd: descriptor_pb2.FileDescriptorProto) -> None:
        if fd.syntax not in ("", "proto2", "proto3"):
            raise _Unprintable
        self.fd = fd
        self.proto3 = fd.syntax == "proto3"
        self.lines: list[str] = []

    def text(self) -> str:
        fd = self.fd
        self.lines.append(f'syntax = "{fd.syntax or "proto2"}";')
        if fd.package:
            self.lines.append(f"package {fd.package};")
        public, weak = set(fd.public_dependency), set(fd.weak_dependency)
        for i, dep in enumerate(fd.dependency):
            kind = "public " if i in public else "weak " if i in weak else ""
            self.lines.append(f"import {kind}{_quote(dep)};")
        self._options(fd.options, "")
        for message in fd.message_type:
            self._message(message, "")
        for enum in fd.enum_type:
            self._enum(enum, "")
        self._extensions(fd.extension, "")
        for service in fd.service:
            self._service(service)
        return "\n".join(self.lines) + "\n"

    def _options(self, options: Any, indent: str) -> None:
        for line in _option_items(options):
            self.lines.append(f"{indent}option {line};")

    def _message(self, msg: descriptor_pb2.DescriptorProto, indent: str) -> None:
        self.lines.append(f"{indent}message {msg.name} {{")
        inner = indent + "  "
        self._options(msg.options, inner)
        entries = {n.name: n for n in msg.nested_type if n.options.map_entry}
        oneofs: dict[int, list[descriptor_pb2.FieldDescriptorProto]] = {}
        for field in msg.field:
            if field.HasField("oneof_index") and not field.proto3_optional:
                oneofs.setdefault(field.oneof_index, []).append(field)
        emitted: set[int] = set()
        for field in msg.field:
            if field.HasField("oneof_index") and not field.proto3_optional:
                index = field.oneof_index
                if index in emitted:
                    continue
                emitted.add(index)
                decl = msg.oneof_decl[index]
                self.lines.append(f"{inner}oneof {decl.name} {{")
                self._options(decl.options, inner + "  ")
                for member in oneofs[index]:
                    self.lines.append(inner + "  " + self._field(member, entries, in_oneof=True))
                self.lines.append(f"{inner}}}")
            else:
                self.lines.append(inner + self._field(field, entries, in_oneof=False))
        for nested in msg.nested_type:
            if not nested.options.map_entry:
                self._message(nested, inner)
        for enum in msg.enum_type:
            self._enum(enum, inner)
        for rng in msg.extension_range:
            if rng.HasField("options"):
                raise _Unprintable
            self.lines.append(f"{inner}extensions {_range(rng.start, rng.end - 1, _MAX_FIELD)};")
        self._reserved(msg.reserved_range, msg.reserved_name, inner, exclusive_end=True)
        self._extensions(msg.extension, inner)
        self.lines.append(f"{indent}}}")

    def _field(self, field: Any, entries: dict[str, Any], in_oneof: bool) -> str:
        if field.type == FDP.TYPE_GROUP:
            raise _Unprintable
        label = ""
        entry = entries.get(field.type_name.rsplit(".", 1)[-1]) if field.type_name else None
        if entry is not None and field.label == FDP.LABEL_REPEATED:
            key, value = entry.field[0], entry.field[1]
            kind = f"map<{self._type(key)}, {self._type(value)}>"
        else:
            kind = self._type(field)
            if field.label == FDP.LABEL_REPEATED:
                label = "repeated "
            elif field.label == FDP.LABEL_REQUIRED:
                label = "required "
            elif not in_oneof and (not self.proto3 or field.proto3_optional):
                label = "optional "
        opts = []
        if field.HasField("default_value"):
            opts.append(f"default = {self._default(field)}")
        if field.HasField("json_name") and field.json_name != _json_name(field.name):
            opts.append(f"json_name = {_quote(field.json_name)}")
        opts += _option_items(field.options)
        suffix = f" [{', '.join(opts)}]" if opts else ""
        return f"{label}{kind} {field.name} = {field.number}{suffix};"

    def _type(self, field: Any) -> str:
        if field.type in (FDP.TYPE_MESSAGE, FDP.TYPE_ENUM):
            return str(field.type_name)
        return _SCALARS[field.type]

    @staticmethod
    def _default(field: Any) -> str:
        value = field.default_value
        if field.type == FDP.TYPE_STRING:
            return _quote(value)
        if field.type == FDP.TYPE_BYTES:
            return '"' + value + '"'  # already C-escaped by protoc
        return str(value)

    def _enum(self, enum: descriptor_pb2.EnumDescriptorProto, indent: str) -> None:
        self.lines.append(f"{indent}enum {enum.name} {{")
        inner = indent + "  "
        self._options(enum.options, inner)
        for value in enum.value:
            opts = _option_items(value.options)
            suffix = f" [{', '.join(opts)}]" if opts else ""
            self.lines.append(f"{inner}{value.name} = {value.number}{suffix};")
        self._reserved(enum.reserved_range, enum.reserved_name, inner, exclusive_end=False)
        self.lines.append(f"{indent}}}")

    def _reserved(self, ranges: Any, names: Any, indent: str, exclusive_end: bool) -> None:
        top = _MAX_FIELD if exclusive_end else _MAX_ENUM
        if ranges:
            parts = [_range(r.start, r.end - 1 if exclusive_end else r.end, top) for r in ranges]
            self.lines.append(f"{indent}reserved {', '.join(parts)};")
        if names:
            quoted = ", ".join(_quote(n) for n in names)
            self.lines.append(f"{indent}reserved {quoted};")

    def _extensions(self, extensions: Any, indent: str) -> None:
        by_extendee: dict[str, list[Any]] = {}
        for ext in extensions:
            by_extendee.setdefault(ext.extendee, []).append(ext)
        for extendee, fields in by_extendee.items():
            self.lines.append(f"{indent}extend {extendee} {{")
            for field in fields:
                line = self._field(field, {}, in_oneof=False)
                if self.proto3 and field.label == FDP.LABEL_OPTIONAL:
                    line = line.removeprefix("optional ")
                self.lines.append(indent + "  " + line)
            self.lines.append(f"{indent}}}")

    def _service(self, service: descriptor_pb2.ServiceDescriptorProto) -> None:
        self.lines.append(f"service {service.name} {{")
        self._options(service.options, "  ")
        for m in service.method:
            client = "stream " if m.client_streaming else ""
            server = "stream " if m.server_streaming else ""
            head = f"  rpc {m.name}({client}{m.input_type}) returns ({server}{m.output_type})"
            opts = _option_items(m.options)
            if opts:
                self.lines.append(head + " {")
                self.lines += [f"    option {o};" for o in opts]
                self.lines.append("  }")
            else:
                self.lines.append(head + ";")
        self.lines.append("}")


def _option_items(options: Any) -> list[str]:
    """``name = value`` for each set option; extensions as ``(full.name)``."""
    if len(unknown_fields.UnknownFieldSet(options)):
        raise _Unprintable  # custom options the runtime cannot name
    items = []
    for fd, value in options.ListFields():
        if fd.name == "map_entry":
            continue
        name = f"({fd.full_name})" if fd.is_extension else fd.name
        values = value if _is_repeated(fd) else [value]
        for v in values:
            items.append(f"{name} = {_literal(fd, v)}")
    return items


def _is_repeated(fd: FieldDescriptor) -> bool:
    repeated = getattr(fd, "is_repeated", None)  # protobuf >= 6; older ones have ``label``
    if repeated is None:
        repeated = fd.label == FieldDescriptor.LABEL_REPEATED
    return bool(repeated)


def _literal(fd: FieldDescriptor, value: Any) -> str:
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        return "{ " + text_format.MessageToString(value, as_one_line=True) + " }"
    if fd.type == FieldDescriptor.TYPE_ENUM:
        return str(fd.enum_type.values_by_number[value].name)
    if fd.type == FieldDescriptor.TYPE_BOOL:
        return "true" if value else "false"
    if fd.type == FieldDescriptor.TYPE_STRING:
        return _quote(value)
    if fd.type == FieldDescriptor.TYPE_BYTES:
        return '"' + text_format.CEscape(value, as_utf8=False) + '"'
    return repr(value) if isinstance(value, float) else str(value)


def _range(start: int, end: int, top: int) -> str:
    if start == end:
        return str(start)
    return f"{start} to {'max' if end >= top else end}"


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _json_name(name: str) -> str:
    """protoc's default json_name: lowerCamel, underscores dropped."""
    out, upper = [], False
    for ch in name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper())
            upper = False
        else:
            out.append(ch)
    return "".join(out)
