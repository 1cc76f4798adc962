"""The ``_schemas`` topic's records, in Confluent Schema Registry's own JSON layout.

Keys (JSON, field order as Confluent writes them, so a key is byte-identical each time and
compaction keeps exactly the newest record per key)::

    {"keytype":"SCHEMA","subject":"orders-value","version":1,"magic":1}
    {"keytype":"CONFIG","subject":null,"magic":0}          subject null = the global config
    {"keytype":"MODE","subject":"orders-value","magic":0}
    {"keytype":"DELETE_SUBJECT","subject":"orders-value","magic":0}
    {"keytype":"CLEAR_SUBJECT","subject":"orders-value","magic":0}
    {"keytype":"NOOP","magic":0}

Values: a SCHEMA value is ``{"subject","version","id","schemaType"?,"references"?,"schema",
"deleted"}`` (``schemaType`` absent means AVRO); CONFIG ``{"compatibilityLevel": ...}``; MODE
``{"mode": ...}``; DELETE_SUBJECT ``{"subject", "version"}`` (every version up to it is soft
deleted); CLEAR_SUBJECT ``{"subject"}`` (its soft-deleted versions are gone). A null value (a
tombstone) removes the key: a permanently deleted version, a deleted config or mode.

A topic written by Confluent's registry reads the same way, and the other way round, so a
deployment can move between the two by pointing at the same ``_schemas`` topic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from schema_registry.formats import Reference


@dataclass(frozen=True, slots=True)
class SchemaRecord:
    subject: str
    version: int
    id: int
    schema_type: str
    schema: str
    references: tuple[Reference, ...]
    deleted: bool = False

    def to_value(self) -> bytes:
        out: dict[str, Any] = {"subject": self.subject, "version": self.version, "id": self.id}
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        if self.references:
            out["references"] = [r.to_json() for r in self.references]
        out["schema"] = self.schema
        out["deleted"] = self.deleted
        return _dumps(out)

    @classmethod
    def from_value(cls, data: dict[str, Any]) -> SchemaRecord:
        refs = tuple(
            Reference(str(r["name"]), str(r["subject"]), int(r["version"]))
            for r in data.get("references") or ()
        )
        return cls(
            subject=str(data["subject"]),
            version=int(data["version"]),
            id=int(data["id"]),
            schema_type=str(data.get("schemaType") or "AVRO"),
            schema=str(data["schema"]),
            references=refs,
            deleted=bool(data.get("deleted", False)),
        )

    def response(self) -> dict[str, Any]:
        """The REST form (``GET /subjects/{s}/versions/{v}``)."""
        out: dict[str, Any] = {"subject": self.subject, "version": self.version, "id": self.id}
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        if self.references:
            out["references"] = [r.to_json() for r in self.references]
        out["schema"] = self.schema
        return out


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def schema_key(subject: str, version: int) -> bytes:
    return _dumps({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1})


def config_key(subject: str | None) -> bytes:
    return _dumps({"keytype": "CONFIG", "subject": subject, "magic": 0})


def mode_key(subject: str | None) -> bytes:
    return _dumps({"keytype": "MODE", "subject": subject, "magic": 0})


def delete_subject_key(subject: str) -> bytes:
    return _dumps({"keytype": "DELETE_SUBJECT", "subject": subject, "magic": 0})


def noop_key() -> bytes:
    return _dumps({"keytype": "NOOP", "magic": 0})


def config_value(level: str) -> bytes:
    return _dumps({"compatibilityLevel": level})


def mode_value(mode: str) -> bytes:
    return _dumps({"mode": mode})


def delete_subject_value(subject: str, version: int) -> bytes:
    return _dumps({"subject": subject, "version": version})
