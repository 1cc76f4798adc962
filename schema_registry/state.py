"""The registry's in-memory view of ``_schemas``, rebuilt from the topic on every start.

``apply(key, value)`` is called by the reader thread for each record in offset order; request
threads read through the query methods. One lock guards everything: updates are tiny and
queries copy what they return, so no caller ever sees a half-applied record.

Rules, as Confluent's store handler applies them: a SCHEMA record sets a version (its
``deleted`` flag included), a tombstone removes it; DELETE_SUBJECT soft-deletes every version
up to the one named; CLEAR_SUBJECT drops the subject's soft-deleted versions. Schema ids are
global: an id lives while any version uses it, and ``max_id`` only grows, so a new schema
never takes the id of one that existed (unless compaction dropped every trace of it and the
registry restarted, as in Confluent).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from schema_registry.formats import Reference
from schema_registry.records import SchemaRecord

log = logging.getLogger(__name__)

DEFAULT_COMPATIBILITY = "BACKWARD"
DEFAULT_MODE = "READWRITE"


class RegistryState:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.versions: dict[str, dict[int, SchemaRecord]] = {}
        self.configs: dict[str | None, str] = {}
        self.modes: dict[str | None, str] = {}
        self.max_id = 0
        self.records = 0  # applied, for metrics and tests

    @contextmanager
    def locked(self) -> Iterator[RegistryState]:
        with self.lock:
            yield self

    # -- applying records --------------------------------------------------------------------

    def apply(self, key: bytes | None, value: bytes | None) -> None:
        if key is None:
            return
        try:
            k = json.loads(key)
            v = json.loads(value) if value is not None else None
        except ValueError:
            log.warning("skipping a _schemas record that is not JSON")
            return
        if not isinstance(k, dict):
            return
        kind = k.get("keytype")
        subject = k.get("subject")
        with self.lock:
            self.records += 1
            if kind == "SCHEMA":
                self._apply_schema(str(subject), int(k.get("version", 0)), v)
            elif kind == "CONFIG":
                self._apply_setting(self.configs, subject, v, "compatibilityLevel")
            elif kind == "MODE":
                self._apply_setting(self.modes, subject, v, "mode")
            elif kind == "DELETE_SUBJECT" and isinstance(v, dict):
                upto = int(v.get("version", 0))
                for version, record in self.versions.get(str(subject), {}).items():
                    if version <= upto and not record.deleted:
                        self.versions[str(subject)][version] = _deleted(record)
            elif kind == "CLEAR_SUBJECT":
                kept = {
                    n: r for n, r in self.versions.get(str(subject), {}).items() if not r.deleted
                }
                self._set_versions(str(subject), kept)

    def _apply_schema(self, subject: str, version: int, value: Any) -> None:
        versions = dict(self.versions.get(subject, {}))
        if value is None:
            versions.pop(version, None)
        else:
            record = SchemaRecord.from_value(value)
            versions[version] = record
            self.max_id = max(self.max_id, record.id)
        self._set_versions(subject, versions)

    def _set_versions(self, subject: str, versions: dict[int, SchemaRecord]) -> None:
        if versions:
            self.versions[subject] = versions
        else:
            self.versions.pop(subject, None)

    @staticmethod
    def _apply_setting(table: dict[str | None, str], subject: Any, value: Any, field: str) -> None:
        if value is None:
            table.pop(subject, None)
        elif isinstance(value, dict) and value.get(field):
            table[subject] = str(value[field])

    # -- queries -----------------------------------------------------------------------------

    def subject_versions(self, subject: str) -> dict[int, SchemaRecord]:
        with self.lock:
            return dict(self.versions.get(subject, {}))

    def subjects(self) -> list[str]:
        with self.lock:
            return sorted(self.versions)

    def by_id(self, schema_id: int) -> list[SchemaRecord]:
        """Every version (all subjects, deleted ones too) whose schema has this id."""
        with self.lock:
            return [
                r for versions in self.versions.values() for r in versions.values()
                if r.id == schema_id
            ]  # fmt: skip

    def id_for(self, schema_type: str, schema: str, refs: tuple[Reference, ...]) -> int | None:
        """The id already given to this exact schema (any subject), if any."""
        with self.lock:
            for versions in self.versions.values():
                for r in versions.values():
                    if r.schema == schema and r.schema_type == schema_type and r.references == refs:
                        return r.id
        return None

    def referenced_by(self, subject: str, version: int) -> list[int]:
        with self.lock:
            return sorted({
                r.id for versions in self.versions.values() for r in versions.values()
                if any(ref.subject == subject and ref.version == version for ref in r.references)
            })  # fmt: skip

    def compatibility(self, subject: str | None) -> str | None:
        with self.lock:
            return self.configs.get(subject)

    def mode(self, subject: str | None) -> str | None:
        with self.lock:
            return self.modes.get(subject)


def _deleted(record: SchemaRecord) -> SchemaRecord:
    return SchemaRecord(
        record.subject, record.version, record.id, record.schema_type, record.schema,
        record.references, deleted=True,
    )  # fmt: skip
