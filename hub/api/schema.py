"""Kafka Connect's data schemas, for records whose values carry a type description.

Values themselves are plain Python: ``dict`` for structs and maps, ``list`` for arrays,
``int``/``float``/``bool``/``str``/``bytes``/``None`` for primitives. A ``Schema`` is optional
metadata beside the value; it is what the JSON converter's schema envelope
(``{"schema": ..., "payload": ...}``) reads and writes and what sinks use to create tables.
Logical types (Decimal, Date, Time, Timestamp) are named schemas as in Kafka Connect.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Type(StrEnum):
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float"
    FLOAT64 = "double"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"


TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
DECIMAL = "org.apache.kafka.connect.data.Decimal"


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    schema: Schema


@dataclass(frozen=True, slots=True)
class Schema:
    """A Connect schema. ``fields`` for STRUCT; ``key``/``value`` for MAP; ``value`` for ARRAY."""

    type: Type
    optional: bool = False
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    default: Any = None
    parameters: dict[str, str] | None = None
    fields: tuple[Field, ...] = field(default_factory=tuple)
    key: Schema | None = None
    value: Schema | None = None

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    def to_json(self) -> dict[str, Any]:
        """The schema as Kafka Connect's JsonConverter writes it in a schema envelope."""
        out: dict[str, Any] = {"type": self.type.value, "optional": self.optional}
        if self.type is Type.STRUCT:
            out["fields"] = [{**f.schema.to_json(), "field": f.name} for f in self.fields]
        elif self.type is Type.ARRAY and self.value is not None:
            out["items"] = self.value.to_json()
        elif self.type is Type.MAP and self.key is not None and self.value is not None:
            out["keys"] = self.key.to_json()
            out["values"] = self.value.to_json()
        for attr in ("name", "version", "doc", "default", "parameters"):
            value = getattr(self, attr)
            if value is not None:
                out[attr] = value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Schema:
        """Parses a schema from a JsonConverter envelope; raises ValueError on a bad type."""
        kind = Type(data["type"])
        fields: tuple[Field, ...] = ()
        key = value = None
        if kind is Type.STRUCT:
            fields = tuple(Field(f["field"], cls.from_json(f)) for f in data.get("fields", []))
        elif kind is Type.ARRAY:
            value = cls.from_json(data["items"])
        elif kind is Type.MAP:
            key, value = cls.from_json(data["keys"]), cls.from_json(data["values"])
        return cls(
            type=kind,
            optional=bool(data.get("optional", False)),
            name=data.get("name"),
            version=data.get("version"),
            doc=data.get("doc"),
            default=data.get("default"),
            parameters=data.get("parameters"),
            fields=fields,
            key=key,
            value=value,
        )


def struct(*fields: tuple[str, Schema], name: str | None = None, optional: bool = False) -> Schema:
    """Shorthand: ``struct(("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA))``."""
    return Schema(
        Type.STRUCT, optional=optional, name=name, fields=tuple(Field(n, s) for n, s in fields)
    )


INT8_SCHEMA = Schema(Type.INT8)
INT16_SCHEMA = Schema(Type.INT16)
INT32_SCHEMA = Schema(Type.INT32)
INT64_SCHEMA = Schema(Type.INT64)
FLOAT64_SCHEMA = Schema(Type.FLOAT64)
BOOLEAN_SCHEMA = Schema(Type.BOOLEAN)
STRING_SCHEMA = Schema(Type.STRING)
BYTES_SCHEMA = Schema(Type.BYTES)
OPTIONAL_INT32_SCHEMA = Schema(Type.INT32, optional=True)
OPTIONAL_INT64_SCHEMA = Schema(Type.INT64, optional=True)
OPTIONAL_FLOAT64_SCHEMA = Schema(Type.FLOAT64, optional=True)
OPTIONAL_BOOLEAN_SCHEMA = Schema(Type.BOOLEAN, optional=True)
OPTIONAL_STRING_SCHEMA = Schema(Type.STRING, optional=True)
OPTIONAL_BYTES_SCHEMA = Schema(Type.BYTES, optional=True)
