"""``.proto`` text -> ``FileDescriptorProto``s with protoc itself, in process.

grpcio-tools bundles protoc's C++ compiler as a Python extension. Its ``get_protos`` entry
(the one behind ``grpc_tools.protoc._protos``) compiles a file and its imports from include
directories and returns the generated Python modules, or raises ``ProtocErrors`` carrying
protoc's own messages (file:line:column), which become the 42201 text. Each generated module
embeds its file's serialized ``FileDescriptorProto`` as the bytes literal passed to
``AddSerializedFile``; that literal is read back with ``ast`` (no generated code is run).

Why protoc and not a pure-Python parser: name resolution across nested scopes and imports,
options, maps, groups and editions are protoc's to define, and a schema the registry accepts
must be one every other tool accepts.

Imports resolve, in order, against: the schema's references (written to a private temporary
directory under their import names), Sluice's copies of ``confluent/meta.proto`` and
``confluent/type/decimal.proto``, the ``google/type`` files of googleapis-common-protos and the
well-known ``google/protobuf`` files shipped with grpcio-tools. One compile at a time (protoc's
state is global to the extension).
"""

from __future__ import annotations

import ast
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

import grpc_tools
from google.protobuf import descriptor_pb2
from grpc_tools import _protoc_compiler

from schema_registry.errors import InvalidSchema

_LOCK = threading.Lock()
_SLUICE_PROTOS = Path(__file__).with_name("protos")
_WELL_KNOWN = Path(grpc_tools.__file__).with_name("_proto")


def _google_type_root() -> Path | None:
    """The site-packages directory holding googleapis-common-protos' ``google/type/*.proto``."""
    try:
        import google.type.date_pb2 as date_pb2
    except ImportError:
        return None
    root = Path(date_pb2.__file__).parents[2]
    return root if (root / "google" / "type" / "date.proto").exists() else None


def include_dirs(extra: Path | None = None) -> list[Path]:
    dirs = [d for d in (extra, _SLUICE_PROTOS, _google_type_root(), _WELL_KNOWN) if d]
    return dirs


def compile_files(
    main: str, files: Mapping[str, str]
) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """Compiles ``files[main]`` (``files`` maps import names to text) -> descriptors of it and
    of every file it imports, by file name; InvalidSchema with protoc's messages otherwise."""
    with _LOCK, tempfile.TemporaryDirectory(prefix="sluice-proto-") as tmp:
        root = Path(tmp)
        for name, text in files.items():
            path = (root / name).resolve()
            if not str(path).startswith(str(root.resolve()) + os.sep):
                raise InvalidSchema(f"Invalid import name {name!r}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        dirs = [str(d).encode() for d in include_dirs(root)]
        try:
            generated = _protoc_compiler.get_protos(main.encode(), dirs)
        except _protoc_compiler.ProtocErrors as exc:
            problems = "; ".join(_describe(e) for e in exc.errors()) or str(exc)
            raise InvalidSchema(f"Invalid schema, details: {problems}") from None
    out: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for _module, source in generated:
        fd = descriptor_pb2.FileDescriptorProto()
        fd.ParseFromString(_serialized_descriptor(source))
        out[fd.name] = fd
    if main not in out:
        raise InvalidSchema(f"protoc produced no descriptor for {main}")
    return out


def _describe(error: object) -> str:
    def text(value: object) -> str:
        return value.decode() if isinstance(value, bytes) else str(value)

    name = text(getattr(error, "filename", b""))
    message = text(getattr(error, "message", b""))
    return f"{name}:{getattr(error, 'line', '?')}:{getattr(error, 'column', '?')}: {message}"


def _serialized_descriptor(source: bytes) -> bytes:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "AddSerializedFile"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, bytes)
        ):
            return node.args[0].value
    raise InvalidSchema("protoc output carried no descriptor")
