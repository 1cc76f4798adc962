"""Protobuf schemas: ``.proto`` text or a base64 ``FileDescriptorProto``, compiled by protoc.

Confluent's registry accepts both spellings and stores ``.proto`` text; confluent-kafka's
serializers send the base64 form and read schemas back with ``?format=serialized``. Here:

* text is compiled by protoc (``_protoc``) together with its references;
* a base64 descriptor is printed to text (``_proto_text``), and that text is compiled and
  compared with the given descriptor; if they agree the text is stored, else the base64 form
  is stored as given (still validated by loading it into a descriptor pool).

The canonical form is that text (or the kept base64). ``serialized()`` gives the base64 of the
compiled descriptor for ``format=serialized``. Compatibility is ``_proto_diff`` (Confluent's
rules, as no Protobuf library has them).
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Mapping

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import DecodeError

from schema_registry.errors import InvalidSchema
from schema_registry.formats import ParsedSchema, _proto_diff, _proto_text, _protoc

log = logging.getLogger(__name__)

ROOT_FILE = "__sluice_root__.proto"
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")


class ProtobufSchema:
    schema_type = "PROTOBUF"

    def __init__(
        self,
        canonical: str,
        descriptor: descriptor_pb2.FileDescriptorProto,
        dependencies: dict[str, descriptor_pb2.FileDescriptorProto],
        source: str | None,
    ) -> None:
        self.canonical = canonical
        self.descriptor = descriptor  # the schema's own file
        self.dependencies = dependencies  # every file it imports, transitively, by name
        self.source = source  # .proto text other schemas can import; None if only base64

    def serialized(self) -> str:
        return base64.standard_b64encode(self.descriptor.SerializeToString()).decode("ascii")

    def compatibility_errors(self, previous: ParsedSchema) -> list[str]:
        if not isinstance(previous, ProtobufSchema):
            return [f"Incompatible schema type: {previous.schema_type} vs PROTOBUF"]
        found = _proto_diff.differences(
            previous.descriptor, previous.dependencies.values(),
            self.descriptor, self.dependencies.values(),
        )  # fmt: skip
        return [
            f"{{errorType:'{d.type}', description:'The new schema has a {d.type} change at "
            f"path '{d.path}' against the old schema'}}"
            for d in found
            if not d.compatible
        ]

    def equivalent(self, other: ParsedSchema) -> bool:
        return isinstance(other, ProtobufSchema) and (
            self.canonical == other.canonical
            or _normalized(self.descriptor) == _normalized(other.descriptor)
        )

    def message_names(self) -> list[str]:
        return [m.name for m in self.descriptor.message_type]


def _normalized(fd: descriptor_pb2.FileDescriptorProto) -> bytes:
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(fd)
    copy.ClearField("name")
    copy.ClearField("source_code_info")
    _clear_json_names(copy.message_type)
    return copy.SerializeToString(deterministic=True)


def _clear_json_names(messages: object) -> None:
    for msg in messages:  # type: ignore[attr-defined]
        for f in msg.field:
            f.ClearField("json_name")
        _clear_json_names(msg.nested_type)


def parse(text: str, references: Mapping[str, ParsedSchema]) -> ProtobufSchema:
    files: dict[str, str] = {}
    for name, ref in references.items():
        if not isinstance(ref, ProtobufSchema):
            raise InvalidSchema(f"Reference {name!r} is a {ref.schema_type} schema, not PROTOBUF")
        if ref.source is None:
            raise InvalidSchema(f"Reference {name!r} has no .proto text form to import")
        files[name] = ref.source
    descriptor = _as_descriptor(text)
    if descriptor is None:
        return _compile(text, files, text)
    printed = _proto_text.print_file(descriptor)
    if printed is not None:
        try:
            parsed = _compile(printed, files, printed)
        except InvalidSchema:
            parsed = None
        if parsed is not None and _normalized(parsed.descriptor) == _normalized(descriptor):
            return parsed
    log.info("keeping a Protobuf schema in its serialized form (no exact .proto text for it)")
    deps = _dependencies_of(descriptor, files)
    return ProtobufSchema(text.strip(), descriptor, deps, None)


def _compile(text: str, files: dict[str, str], canonical: str) -> ProtobufSchema:
    compiled = _protoc.compile_files(ROOT_FILE, {**files, ROOT_FILE: text})
    root = compiled.pop(ROOT_FILE)
    root.name = ROOT_FILE
    return ProtobufSchema(canonical, root, compiled, text)


def _as_descriptor(text: str) -> descriptor_pb2.FileDescriptorProto | None:
    """The descriptor if ``text`` is base64 of one (Confluent tries text first; a .proto file
    always has characters base64 lacks, e.g. ';')."""
    if not _BASE64.fullmatch(text):
        return None
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    fd = descriptor_pb2.FileDescriptorProto()
    try:
        fd.ParseFromString(raw)
    except DecodeError:
        return None
    if not (fd.message_type or fd.enum_type or fd.service or fd.syntax or fd.package):
        return None
    return fd


def _dependencies_of(
    fd: descriptor_pb2.FileDescriptorProto, files: dict[str, str]
) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """Compiles what ``fd`` imports and checks that ``fd`` links against it."""
    stub = "".join(f'import "{dep}";\n' for dep in fd.dependency)
    stub = 'syntax = "proto3";\n' + stub
    deps = _protoc.compile_files("__sluice_deps__.proto", {**files, "__sluice_deps__.proto": stub})
    deps.pop("__sluice_deps__.proto", None)
    pool = descriptor_pool.DescriptorPool()
    try:
        for dep in _in_dependency_order(deps):
            pool.Add(dep)
        copy = descriptor_pb2.FileDescriptorProto()
        copy.CopyFrom(fd)
        if not copy.name:
            copy.name = ROOT_FILE
        pool.Add(copy)
        pool.FindFileByName(copy.name)
    except (TypeError, KeyError, ValueError) as exc:
        raise InvalidSchema(f"Invalid schema, details: {exc}") from None
    return deps


def _in_dependency_order(
    files: dict[str, descriptor_pb2.FileDescriptorProto],
) -> list[descriptor_pb2.FileDescriptorProto]:
    done: list[str] = []

    def visit(name: str) -> None:
        if name in done or name not in files:
            return
        for dep in files[name].dependency:
            visit(dep)
        done.append(name)

    for name in files:
        visit(name)
    return [files[n] for n in done]
