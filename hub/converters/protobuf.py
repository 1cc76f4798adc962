"""``io.confluent.connect.protobuf.ProtobufConverter``: Protobuf with a schema registry.

Writing: the record's struct schema becomes a ``.proto`` file (``_protobuf_data``), registered
as PROTOBUF under the strategy's subject and compiled (protoc, via the registry's Protobuf
support) into a dynamic message class; each value fills a message. Wire format: magic byte,
schema id, the message indexes (``0`` for the file's first message) as zigzag varints, then
the message bytes. Reading: the id names the writer's schema (references resolved through the
registry), the indexes name the message; the value comes back as a Connect struct.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, NamedTuple

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from hub.api import DataError, Schema, SchemaAndValue
from hub.converters import _protobuf_data as data
from hub.converters import _registry as reg
from schema_registry.errors import InvalidSchema
from schema_registry.formats import protobuf as proto_format

_LOCK = threading.Lock()  # descriptor pools are built one at a time


class ProtobufConverterConfig(reg.RegistryConverterConfig):
    pass


class _Writer(NamedTuple):
    prefix: bytes
    cls: Any
    schema: Schema


class _Reader(NamedTuple):
    schema: Schema
    cls: Any


class ProtobufConverter(reg.RegistryConverter):
    name = "protobuf"
    aliases = ("ProtobufConverter", "io.confluent.connect.protobuf.ProtobufConverter")
    config_model = ProtobufConverterConfig
    config: ProtobufConverterConfig
    description = "Protobuf with a schema registry (Confluent wire format)."

    def __init__(self, config: Mapping[str, Any], is_key: bool) -> None:
        super().__init__(config, is_key)
        self._readers: dict[tuple[int, tuple[int, ...]], _Reader] = {}
        self._schemas: dict[int, proto_format.ProtobufSchema] = {}

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if schema is None:
            raise DataError("ProtobufConverter needs a Connect schema; the record has none")
        writer: _Writer = self._writers.get(schema, lambda: self._new_writer(topic, schema))
        message = writer.cls()
        if not isinstance(value, dict):
            raise DataError(f"ProtobufConverter writes structs, got {type(value).__name__}")
        data.fill(message, writer.schema, value)
        return writer.prefix + message.SerializeToString()

    def _new_writer(self, topic: str, schema: Schema) -> _Writer:
        text, full_name = data.proto_text(schema)
        subject = reg.subject_name(self.strategy, topic, self.is_key, full_name)
        client = self.client
        if self.config.use_latest_version:
            found = reg.registry_call(f"reading the latest {subject}",
                                      lambda: client.version(subject, "latest"))  # fmt: skip
            schema_id = found.id
            parsed = self._parse_registered(found)
        else:
            if self.config.auto_register_schemas:
                schema_id = reg.registry_call(
                    f"registering a schema under {subject}",
                    lambda: client.register(subject, text, "PROTOBUF"),
                )
            else:
                schema_id = reg.registry_call(
                    f"looking up the schema under {subject}",
                    lambda: client.lookup(subject, text, "PROTOBUF"),
                ).id
            parsed = _parse(text, {})
        cls = _message_class(parsed, full_name.rpartition(".")[2], [0])
        return _Writer(reg.prefix(schema_id) + b"\x00", cls, schema)

    def to_connect(self, topic: str, data_bytes: bytes | None) -> SchemaAndValue:
        if data_bytes is None:
            return SchemaAndValue(None, None)
        schema_id, payload = reg.frame(data_bytes)
        indexes, offset = _read_indexes(payload)
        reader = self._readers.get((schema_id, indexes))
        if reader is None:
            reader = self._new_reader(schema_id, indexes)
        message = reader.cls()
        try:
            message.ParseFromString(bytes(payload[offset:]))
        except DecodeError as exc:
            raise DataError(
                f"Protobuf payload of schema id {schema_id} is corrupt: {exc}"
            ) from None
        return SchemaAndValue(reader.schema, data.read(message, reader.schema))

    def _new_reader(self, schema_id: int, indexes: tuple[int, ...]) -> _Reader:
        client = self.client
        found = reg.registry_call(f"reading schema id {schema_id}",
                                  lambda: client.schema_by_id(schema_id))  # fmt: skip
        if found.schema_type != "PROTOBUF":
            raise DataError(f"schema id {schema_id} is {found.schema_type}, not PROTOBUF")
        parsed = self._parse_registered(found)
        cls = _message_class(parsed, None, list(indexes))
        reader = _Reader(data.connect_schema(cls.DESCRIPTOR), cls)
        if len(self._readers) >= 1000:
            self._readers.clear()
        self._readers[(schema_id, indexes)] = reader
        return reader

    def _parse_registered(self, found: Any) -> proto_format.ProtobufSchema:
        refs: dict[str, proto_format.ProtobufSchema] = {}
        for ref in found.references:
            self._load_reference(ref, refs)
        return _parse(found.schema, refs)

    def _load_reference(self, ref: Mapping[str, Any], out: dict[str, Any]) -> None:
        subject, version, name = str(ref["subject"]), int(ref["version"]), str(ref["name"])
        if name in out:
            return
        client = self.client
        found = reg.registry_call(f"reading reference {subject} v{version}",
                                  lambda: client.version(subject, version))  # fmt: skip
        inner: dict[str, proto_format.ProtobufSchema] = {}
        for nested in found.references:
            self._load_reference(nested, inner)
        out.update(inner)
        out[name] = _parse(found.schema, inner)


def _parse(text: str, refs: dict[str, Any]) -> proto_format.ProtobufSchema:
    try:
        return proto_format.parse(text, refs)
    except InvalidSchema as exc:
        raise DataError(f"Protobuf schema does not compile: {exc.message}") from None


def _message_class(parsed: proto_format.ProtobufSchema, name: str | None, path: list[int]) -> Any:
    """The dynamic message class for the message at ``path`` (message indexes) of a schema."""
    with _LOCK:
        pool = descriptor_pool.DescriptorPool()
        for dep in _ordered(parsed.dependencies):
            pool.Add(dep)
        pool.Add(parsed.descriptor)
        fd = parsed.descriptor
        prefix = f"{fd.package}." if fd.package else ""
        if name is not None:
            full = prefix + name
        else:
            message = fd.message_type[path[0]]
            full = prefix + message.name
            for index in path[1:]:
                message = message.nested_type[index]
                full += "." + message.name
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(full))


def _ordered(files: dict[str, Any]) -> list[Any]:
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


def _read_indexes(payload: memoryview) -> tuple[tuple[int, ...], int]:
    """Confluent's message-index list: zigzag varint count, then the indexes; ``0`` alone
    means ``[0]``."""
    count, offset = _zigzag(payload, 0)
    if count == 0:
        return (0,), offset
    indexes = []
    for _ in range(count):
        value, offset = _zigzag(payload, offset)
        indexes.append(value)
    return tuple(indexes), offset


def _zigzag(buf: memoryview, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise DataError("Protobuf message indexes are truncated")
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), i
        shift += 7
