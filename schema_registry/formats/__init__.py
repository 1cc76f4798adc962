"""The three schema types the registry serves: parse, canonical text, compatibility.

Each format module offers ``parse(text, references) -> ParsedSchema``. ``references`` maps
each reference *name* (an Avro full name's schema, a ``.proto`` import path, a JSON Schema
``$ref`` URL) to the already-parsed schema it names, transitively resolved by the registry
(``schema_registry.registry``), so a format never reads the store itself.

``ParsedSchema.compatibility_errors(previous)`` answers Confluent's *backward* question: can
this (new) schema read data written with ``previous``? Empty means yes. The levels
(``schema_registry.compatibility``) compose it both ways round, exactly as Confluent's
``CompatibilityChecker`` does, so a format writes the rule once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from schema_registry.errors import InvalidSchema

TYPES = ("AVRO", "PROTOBUF", "JSON")


@dataclass(frozen=True, slots=True)
class Reference:
    """A schema reference as Confluent stores it: ``name`` as used inside the schema."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


class ParsedSchema(Protocol):
    schema_type: str
    canonical: str  # what the registry stores and compares; Confluent's canonicalString()

    def compatibility_errors(self, previous: ParsedSchema) -> list[str]:
        """Problems reading data written with ``previous`` using this schema; [] if none."""
        ...

    def equivalent(self, other: ParsedSchema) -> bool:
        """Same schema up to formatting (lookups and deduplication)."""
        ...


def schema_type(value: str | None) -> str:
    """The stored type name for a request's ``schemaType`` (absent means AVRO)."""
    kind = (value or "AVRO").upper()
    if kind not in TYPES:
        raise InvalidSchema(f"Invalid schema type {value!r}; use AVRO, PROTOBUF or JSON")
    return kind


def parse(kind: str, text: str, references: Mapping[str, ParsedSchema]) -> ParsedSchema:
    """Parses ``text`` as ``kind``; InvalidSchema (42201) names what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidSchema("Empty schema")
    if kind == "AVRO":
        from schema_registry.formats import avro

        return avro.parse(text, references)
    if kind == "PROTOBUF":
        from schema_registry.formats import protobuf

        return protobuf.parse(text, references)
    from schema_registry.formats import json_schema

    return json_schema.parse(text, references)
