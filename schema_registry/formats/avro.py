"""Avro schemas: parsed and checked by Apache Avro's Python library (``avro``).

Confluent's registry parses with Avro's Java parser and judges compatibility with Avro's
``SchemaCompatibility`` (reader/writer resolution). The ``avro`` package is the same project's
Python port of both, name validation and ``ReaderWriterCompatibilityChecker`` included, so the
registry accepts and rejects what Confluent's does without rules of our own. (fastavro, faster
at encoding, serves the converters; it has no compatibility checker.)

References: each referenced schema defines named types that this one uses by name; they are
parsed first into the same ``Names`` table. The canonical text is the schema's own JSON,
compacted (references stay references, as in Confluent).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import avro.errors
import avro.name
import avro.schema
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

from schema_registry.errors import InvalidSchema
from schema_registry.formats import ParsedSchema


class AvroSchema:
    schema_type = "AVRO"

    def __init__(self, node: Any, schema: avro.schema.Schema, refs: tuple[AvroSchema, ...]) -> None:
        self.node = node
        self.schema = schema
        self.references = refs
        self.canonical = json.dumps(node, separators=(",", ":"), ensure_ascii=False)

    def compatibility_errors(self, previous: ParsedSchema) -> list[str]:
        if not isinstance(previous, AvroSchema):
            return [f"Incompatible schema type: {previous.schema_type} vs AVRO"]
        result = ReaderWriterCompatibilityChecker().get_compatibility(self.schema, previous.schema)
        if result.compatibility is SchemaCompatibilityType.compatible:
            return []
        kinds = [str(getattr(k, "value", k)).upper() for k in result.incompatibilities]
        locations = sorted(result.locations)
        messages = sorted(str(m) for m in result.messages)
        out = []
        for i, kind in enumerate(kinds or ["INCOMPATIBLE"]):
            where = locations[i] if i < len(locations) else (locations[-1] if locations else "/")
            what = messages[i] if i < len(messages) else ", ".join(messages)
            out.append(
                f"{{errorType:'{kind}', description:'The new schema cannot read data written by "
                f"the old schema at path \"{where}\"', additionalInfo:'{what}'}}"
            )
        return out

    def equivalent(self, other: ParsedSchema) -> bool:
        return isinstance(other, AvroSchema) and (
            self.canonical == other.canonical or self.schema == other.schema
        )


def parse(text: str, references: Mapping[str, ParsedSchema]) -> AvroSchema:
    try:
        node = json.loads(text)
    except ValueError as exc:
        raise InvalidSchema(f"Invalid schema: not JSON ({exc})") from None
    names = avro.name.Names()
    refs: list[AvroSchema] = []
    for name, ref in references.items():
        if not isinstance(ref, AvroSchema):
            raise InvalidSchema(f"Reference {name!r} is a {ref.schema_type} schema, not AVRO")
        _define(ref.node, names, name)
        refs.append(ref)
    try:
        schema = avro.schema.make_avsc_object(node, names)
    except (avro.errors.AvroException, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InvalidSchema(f"Invalid schema {text[:200]}, details: {exc}") from None
    return AvroSchema(node, schema, tuple(refs))


def _define(node: Any, names: avro.name.Names, ref_name: str) -> None:
    """Adds a referenced schema's named types to ``names`` (a name defined twice is fine when
    two references pull in the same dependency)."""
    try:
        avro.schema.make_avsc_object(node, names)
    except avro.errors.SchemaParseException as exc:
        if "already in use" not in str(exc) and "redefine" not in str(exc).lower():
            raise InvalidSchema(f"Invalid reference {ref_name!r}: {exc}") from None
    except (avro.errors.AvroException, TypeError, ValueError, KeyError) as exc:
        raise InvalidSchema(f"Invalid reference {ref_name!r}: {exc}") from None
