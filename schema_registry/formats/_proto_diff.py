"""Protobuf compatibility: Confluent's ``protobuf/diff`` rules on ``FileDescriptorProto``s.

``differences(original, update)`` lists the changes from ``original`` (the registered, older
schema) to ``update``; a change whose type is not in ``COMPATIBLE`` breaks compatibility. The
rule set is Confluent's (no Protobuf library has one): messages and fields are matched by name
and by field number; adding or removing fields, messages, enums, enum constants and oneofs is
compatible; changing a field's kind (scalar/message/map), its wire-compatible scalar class
(varint int32/int64/uint32/uint64/bool/enum, zigzag sint32/sint64, fixed32, fixed64, float,
double, string/bytes), a numeric field's label, the referenced message type, the package, or
removing a message, or moving several existing fields into one oneof, is not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import descriptor_pb2

FDP = descriptor_pb2.FieldDescriptorProto

COMPATIBLE = frozenset({
    "MESSAGE_ADDED", "MESSAGE_MOVED", "ENUM_ADDED", "ENUM_REMOVED", "ENUM_CONST_ADDED",
    "ENUM_CONST_CHANGED", "ENUM_CONST_REMOVED", "FIELD_ADDED", "FIELD_REMOVED",
    "FIELD_NAME_CHANGED", "FIELD_STRING_OR_BYTES_LABEL_CHANGED", "ONEOF_ADDED", "ONEOF_REMOVED",
    "ONEOF_FIELD_ADDED", "ONEOF_FIELD_MOVED_TO_TOP_LEVEL",
})  # fmt: skip

_SCALAR_KIND = {
    FDP.TYPE_INT32: "GENERAL_NUMBER", FDP.TYPE_INT64: "GENERAL_NUMBER",
    FDP.TYPE_UINT32: "GENERAL_NUMBER", FDP.TYPE_UINT64: "GENERAL_NUMBER",
    FDP.TYPE_BOOL: "GENERAL_NUMBER", FDP.TYPE_ENUM: "GENERAL_NUMBER",
    FDP.TYPE_SINT32: "SIGNED_NUMBER", FDP.TYPE_SINT64: "SIGNED_NUMBER",
    FDP.TYPE_STRING: "STRING_OR_BYTES", FDP.TYPE_BYTES: "STRING_OR_BYTES",
    FDP.TYPE_FIXED32: "FIXED32", FDP.TYPE_SFIXED32: "FIXED32",
    FDP.TYPE_FIXED64: "FIXED64", FDP.TYPE_SFIXED64: "FIXED64",
    FDP.TYPE_FLOAT: "FLOAT", FDP.TYPE_DOUBLE: "DOUBLE",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Difference:
    type: str
    path: str

    @property
    def compatible(self) -> bool:
        return self.type in COMPATIBLE


@dataclass
class _Side:
    """Every message/enum type visible to one schema, by full name (with leading dot)."""

    package: str
    types: dict[str, Any] = field(default_factory=dict)
    packages: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, main: Any, files: Iterable[Any]) -> _Side:
        side = cls(main.package)
        for fd in [*files, main]:
            prefix = f".{fd.package}" if fd.package else ""
            side._collect(prefix, fd.message_type, fd.enum_type, fd.package)
        return side

    def _collect(self, prefix: str, messages: Any, enums: Any, package: str) -> None:
        for msg in messages:
            name = f"{prefix}.{msg.name}"
            self.types[name], self.packages[name] = msg, package
            self._collect(name, msg.nested_type, msg.enum_type, package)
        for enum in enums:
            name = f"{prefix}.{enum.name}"
            self.types[name], self.packages[name] = enum, package


class _Diff:
    def __init__(self, original: _Side, update: _Side, proto3: tuple[bool, bool]) -> None:
        self.original, self.update = original, update
        self.proto3 = proto3
        self.out: list[Difference] = []
        self._seen: set[tuple[str, str]] = set()

    def add(self, kind: str, path: str) -> None:
        self.out.append(Difference(kind, path or "#/"))

    def types(self, path: str, orig: Any, upd: Any, orig_enums: Any, upd_enums: Any) -> None:
        om = {m.name: (i, m) for i, m in enumerate(orig)}
        um = {m.name: (i, m) for i, m in enumerate(upd)}
        for name in sorted(set(om) | set(um)):
            where = f"{path}/{name}"
            if name not in um:
                if not om[name][1].options.map_entry:
                    self.add("MESSAGE_REMOVED", where)
            elif name not in om:
                if not um[name][1].options.map_entry:
                    self.add("MESSAGE_ADDED", where)
            else:
                self.message(where, om[name][1], um[name][1])
                if om[name][0] != um[name][0]:
                    self.add("MESSAGE_MOVED", where)
        oe = {e.name: e for e in orig_enums}
        ue = {e.name: e for e in upd_enums}
        for name in sorted(set(oe) | set(ue)):
            where = f"{path}/{name}"
            if name not in ue:
                self.add("ENUM_REMOVED", where)
            elif name not in oe:
                self.add("ENUM_ADDED", where)
            else:
                self.enum(where, oe[name], ue[name])

    def enum(self, path: str, orig: Any, upd: Any) -> None:
        ob = {v.number: v for v in orig.value}
        ub = {v.number: v for v in upd.value}
        for number in sorted(set(ob) | set(ub)):
            if number not in ub:
                self.add("ENUM_CONST_REMOVED", f"{path}/{number}")
            elif number not in ob:
                self.add("ENUM_CONST_ADDED", f"{path}/{number}")
            elif ob[number].name != ub[number].name:
                self.add("ENUM_CONST_CHANGED", f"{path}/{number}")

    def message(self, path: str, orig: Any, upd: Any) -> None:
        key = (path, orig.name)
        if key in self._seen:  # recursive types: compared once
            return
        self._seen.add(key)
        o_fields, o_oneof = _fields(orig)
        u_fields, u_oneof = _fields(upd)
        o_names = {d.name for i, d in enumerate(orig.oneof_decl) if not _synthetic(orig, i)}
        u_names = {d.name for i, d in enumerate(upd.oneof_decl) if not _synthetic(upd, i)}
        gone = {
            name for name in o_names - u_names
            if not any(t in u_fields for t, o in o_oneof.items() if o == name)
        }  # fmt: skip
        for name in sorted(u_names):
            members = [t for t, o in u_oneof.items() if o == name]
            groups = set()
            moved_in = 0
            for tag in members:
                if tag in o_oneof:
                    groups.add("oneof:" + o_oneof[tag])
                elif tag in o_fields:
                    groups.add(f"field:{tag}")
                    moved_in += 1
            if len(groups) > 1:
                kind = (
                    "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
                    if moved_in > 1
                    else ("FIELD_MOVED_TO_EXISTING_ONEOF")
                )
                self.add(kind, f"{path}/{name}")
        for name in sorted(o_names | u_names):
            if name not in u_names:
                self.add("ONEOF_REMOVED", f"{path}/{name}")
            elif name not in o_names:
                self.add("ONEOF_ADDED", f"{path}/{name}")
        for tag in sorted(set(o_fields) | set(u_fields)):
            of: Any = o_fields.get(tag)
            uf: Any = u_fields.get(tag)
            oo, uo = o_oneof.get(tag), u_oneof.get(tag)
            where = f"{path}/{tag}"
            if uf is None:
                if oo is not None:
                    if oo not in gone:
                        self.add("ONEOF_FIELD_REMOVED", f"{path}/{oo}/{tag}")
                else:
                    required = of.label == FDP.LABEL_REQUIRED
                    self.add("REQUIRED_FIELD_REMOVED" if required else "FIELD_REMOVED", where)
            elif of is None:
                if uo is not None:
                    self.add("ONEOF_FIELD_ADDED", f"{path}/{uo}/{tag}")
                else:
                    required = uf.label == FDP.LABEL_REQUIRED
                    self.add("REQUIRED_FIELD_ADDED" if required else "FIELD_ADDED", where)
            else:
                if oo is not None and uo is None:
                    self.add("ONEOF_FIELD_MOVED_TO_TOP_LEVEL", where)
                self.field(f"{path}/{uo}/{tag}" if uo else where, of, uf)
        self.types(path, orig.nested_type, upd.nested_type, orig.enum_type, upd.enum_type)

    def field(self, path: str, orig: Any, upd: Any) -> None:
        if orig.name != upd.name:
            self.add("FIELD_NAME_CHANGED", path)
        self.labels_and_types(
            path, _label(orig, self.proto3[0]), _label(upd, self.proto3[1]), orig, upd
        )

    def labels_and_types(self, path: str, ol: Any, ul: Any, orig: Any, upd: Any) -> None:
        ok, uk = self._kind(orig, self.original), self._kind(upd, self.update)
        if ok != uk:
            self.add("FIELD_KIND_CHANGED", path)
        elif ok == "SCALAR":
            osk, usk = _SCALAR_KIND[orig.type], _SCALAR_KIND[upd.type]
            if osk != usk:
                self.add("FIELD_SCALAR_KIND_CHANGED", path)
            elif ol is not None and ul is not None and ol != ul:
                self.add(
                    "FIELD_STRING_OR_BYTES_LABEL_CHANGED" if osk == "STRING_OR_BYTES"
                    else "FIELD_NUMERIC_LABEL_CHANGED", path
                )  # fmt: skip
        elif ok == "MAP":
            oe = self.original.types[orig.type_name]
            ue = self.update.types[upd.type_name]
            self.labels_and_types(path, None, None, oe.field[0], ue.field[0])
            self.labels_and_types(path, None, None, oe.field[1], ue.field[1])
        elif ok == "MESSAGE":
            self.message_types(path, orig.type_name, upd.type_name)

    def message_types(self, path: str, orig_name: str, upd_name: str) -> None:
        o_local = _local(orig_name, self.original.packages.get(orig_name, ""))
        u_local = _local(upd_name, self.update.packages.get(upd_name, ""))
        if o_local != u_local:
            self.add("FIELD_NAMED_TYPE_CHANGED", path)
            return
        orig, upd = self.original.types.get(orig_name), self.update.types.get(upd_name)
        if orig is None or upd is None:
            return
        sub = _Diff(self.original, self.update, self.proto3)
        sub._seen = self._seen
        sub.message(f"#/{o_local}", orig, upd)
        self.out.extend(sub.out)
        if any(not d.compatible for d in sub.out):
            self.add("FIELD_NAMED_TYPE_CHANGED", path)

    @staticmethod
    def _kind(f: Any, side: _Side) -> str:
        if f.type == FDP.TYPE_MESSAGE:
            target = side.types.get(f.type_name)
            if target is not None and getattr(target.options, "map_entry", False):
                return "MAP" if f.label == FDP.LABEL_REPEATED else "MESSAGE"
            return "MESSAGE"
        return "SCALAR"


def _fields(msg: Any) -> tuple[dict[int, Any], dict[int, str]]:
    by_tag: dict[int, Any] = {}
    oneof: dict[int, str] = {}
    for f in msg.field:
        by_tag[f.number] = f
        if f.HasField("oneof_index") and not f.proto3_optional:
            oneof[f.number] = msg.oneof_decl[f.oneof_index].name
    return by_tag, oneof


def _synthetic(msg: Any, index: int) -> bool:
    members = [f for f in msg.field if f.HasField("oneof_index") and f.oneof_index == index]
    return bool(members) and all(f.proto3_optional for f in members)


def _label(f: Any, proto3: bool) -> str | None:
    """Labels as Confluent's parser sees them: proto3 implicit presence has none."""
    if f.label == FDP.LABEL_REPEATED:
        return "REPEATED"
    if f.label == FDP.LABEL_REQUIRED:
        return "REQUIRED"
    return "OPTIONAL" if (f.proto3_optional or not proto3) else None


def _local(full_name: str, package: str) -> str:
    name = full_name.lstrip(".")
    return name[len(package) + 1 :] if package and name.startswith(package + ".") else name


def differences(
    original: Any, original_deps: Iterable[Any], update: Any, update_deps: Iterable[Any]
) -> list[Difference]:
    o_side, u_side = _Side.of(original, original_deps), _Side.of(update, update_deps)
    diff = _Diff(o_side, u_side, (original.syntax == "proto3", update.syntax == "proto3"))
    if original.package != update.package:
        diff.add("PACKAGE_CHANGED", "#/")
    diff.types("#", original.message_type, update.message_type, original.enum_type,
               update.enum_type)  # fmt: skip
    return diff.out
