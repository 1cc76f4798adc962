"""``SchemaRegistry``: the registry's operations over the ``_schemas`` log and its view.

Reads answer from ``RegistryState`` (the materialised topic). Writes follow one path, under
one lock: read the topic to its end (so decisions see every earlier write, this instance's
or another's), decide (validate, check compatibility, pick the id and version), append the
records with acks=all, then read to the end again before answering, so the writer and anyone
reading from this instance afterwards see the result (read-your-write).

Single writer: two registry instances writing at the same moment could both pick the same
new id. Sluice runs one registry per ``sluice up``; a deployment with several instances on one
cluster must send writes to one of them (docs/schema-registry.md). Every instance serves reads.

(~500 lines, over the usual size on purpose: every operation here shares the write lock, the
read-to-end barrier and the parse cache, and Confluent's rules for ids, versions, deletes and
modes read best side by side; requests and parsing live elsewhere.)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from schema_registry import compatibility as compat
from schema_registry import errors
from schema_registry.errors import Incompatible, InvalidSchema, StoreError
from schema_registry.formats import ParsedSchema, Reference, parse, schema_type
from schema_registry.records import (
    SchemaRecord,
    config_key,
    config_value,
    delete_subject_key,
    delete_subject_value,
    mode_key,
    mode_value,
    schema_key,
)
from schema_registry.state import DEFAULT_COMPATIBILITY, DEFAULT_MODE, RegistryState

log = logging.getLogger(__name__)

MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
MAX_VERSION = 2**31 - 1
_PARSED_CACHE = 2048


class Log(Protocol):
    """The topic: ``KafkaBasedLog`` in production, an in-memory list in unit tests."""

    def send(self, records: Iterable[tuple[bytes, bytes | None]]) -> None: ...

    def read_to_end(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SchemaRequest:
    """The body of register/lookup/compatibility requests."""

    schema: str
    schema_type: str = "AVRO"
    references: tuple[Reference, ...] = ()
    id: int | None = None
    version: int | None = None

    @classmethod
    def from_json(cls, body: Any) -> SchemaRequest:
        if not isinstance(body, dict):
            raise errors.Unprocessable("The request body must be a JSON object", 422)
        text = body.get("schema")
        if not isinstance(text, str):
            raise InvalidSchema("Empty schema" if text is None else "schema must be a string")
        refs = []
        for ref in body.get("references") or []:
            try:
                refs.append(Reference(str(ref["name"]), str(ref["subject"]), int(ref["version"])))
            except (KeyError, TypeError, ValueError):
                raise InvalidSchema(f"Invalid schema reference {ref!r}") from None
        sid, version = body.get("id"), body.get("version")
        return cls(
            schema=text,
            schema_type=schema_type(body.get("schemaType")),
            references=tuple(refs),
            id=int(sid) if isinstance(sid, int) and sid >= 0 else None,
            version=int(version) if isinstance(version, int) and version > 0 else None,
        )


@dataclass
class SchemaRegistry:
    log: Log
    state: RegistryState = field(default_factory=RegistryState)
    _write_lock: threading.Lock = field(default_factory=threading.Lock)
    _parsed: dict[tuple[str, str, tuple[Reference, ...]], ParsedSchema] = field(
        default_factory=dict
    )

    # -- parsing -----------------------------------------------------------------------------

    def parse(self, kind: str, text: str, refs: tuple[Reference, ...]) -> ParsedSchema:
        key = (kind, text, refs)
        hit = self._parsed.get(key)
        if hit is not None:
            return hit
        resolved = self._resolve(kind, refs, [])
        parsed = parse(kind, text, resolved)
        if len(self._parsed) >= _PARSED_CACHE:
            self._parsed.clear()
        self._parsed[key] = parsed
        return parsed

    def parsed_record(self, record: SchemaRecord) -> ParsedSchema:
        return self.parse(record.schema_type, record.schema, record.references)

    def _resolve(
        self, kind: str, refs: tuple[Reference, ...], stack: list[tuple[str, int]]
    ) -> dict[str, ParsedSchema]:
        """name -> parsed schema for every reference, transitively, dependencies first."""
        out: dict[str, ParsedSchema] = {}
        for ref in refs:
            if (ref.subject, ref.version) in stack:
                raise InvalidSchema(f"Circular reference to {ref.subject} version {ref.version}")
            record = self.state.subject_versions(ref.subject).get(ref.version)
            if record is None:
                raise InvalidSchema(
                    f"Invalid schema reference {ref.name}: subject {ref.subject} has no version "
                    f"{ref.version}"
                )
            if record.schema_type != kind:
                raise InvalidSchema(f"Reference {ref.name} is {record.schema_type}, not {kind}")
            inner = self._resolve(kind, record.references, [*stack, (ref.subject, ref.version)])
            for name, parsed in inner.items():
                out.setdefault(name, parsed)
            out[ref.name] = self.parse(kind, record.schema, record.references)
        return out

    # -- reads -------------------------------------------------------------------------------

    def subjects(
        self, prefix: str = "", deleted: bool = False, deleted_only: bool = False
    ) -> list[str]:
        out = []
        for subject in self.state.subjects():
            if not subject.startswith(prefix):
                continue
            flags = [r.deleted for r in self.state.subject_versions(subject).values()]
            if (deleted_only and any(flags)) or (not deleted_only and (deleted or not all(flags))):
                out.append(subject)
        return out

    def versions(
        self, subject: str, deleted: bool = False, deleted_only: bool = False
    ) -> list[int]:
        records = self.state.subject_versions(subject)
        found = sorted(
            v for v, r in records.items()
            if (r.deleted if deleted_only else deleted or not r.deleted)
        )  # fmt: skip
        if not found and not (deleted_only and records):
            raise errors.subject_not_found(subject)
        return found

    def version(self, subject: str, version: str | int, deleted: bool = False) -> SchemaRecord:
        records = self.state.subject_versions(subject)
        number = parse_version(version)
        if not records or (not deleted and all(r.deleted for r in records.values())):
            raise errors.subject_not_found(subject)
        if number == -1:
            visible = [v for v, r in records.items() if deleted or not r.deleted]
            return records[max(visible)]
        record = records.get(number)
        if record is None or (record.deleted and not deleted):
            raise errors.version_not_found(number)
        return record

    def schema_by_id(self, schema_id: int, subject: str | None = None) -> SchemaRecord:
        records = self.state.by_id(schema_id)
        if not records:
            raise errors.schema_not_found(schema_id)
        preferred = [r for r in records if r.subject == subject] if subject else []
        live = [r for r in records if not r.deleted]
        return (preferred or live or records)[0]

    def subjects_for_id(self, schema_id: int, deleted: bool = False) -> list[str]:
        records = self.state.by_id(schema_id)
        if not records:
            raise errors.schema_not_found(schema_id)
        return sorted({r.subject for r in records if deleted or not r.deleted})

    def versions_for_id(self, schema_id: int, deleted: bool = False) -> list[dict[str, Any]]:
        records = self.state.by_id(schema_id)
        if not records:
            raise errors.schema_not_found(schema_id)
        return [
            {"subject": r.subject, "version": r.version}
            for r in sorted(records, key=lambda r: (r.subject, r.version))
            if deleted or not r.deleted
        ]

    def schemas(
        self, prefix: str = "", deleted: bool = False, latest_only: bool = False
    ) -> list[SchemaRecord]:
        out = []
        for subject in self.state.subjects():
            if not subject.startswith(prefix):
                continue
            records = [r for _, r in sorted(self.state.subject_versions(subject).items())
                       if deleted or not r.deleted]  # fmt: skip
            out += records[-1:] if latest_only else records
        return out

    def lookup(self, subject: str, request: SchemaRequest, deleted: bool = False) -> SchemaRecord:
        records = self.state.subject_versions(subject)
        candidates = [
            r for _, r in sorted(records.items(), reverse=True) if deleted or not r.deleted
        ]
        if not candidates:
            raise errors.subject_not_found(subject)
        parsed = self.parse(request.schema_type, request.schema, request.references)
        for record in candidates:
            if (record.schema_type, record.schema, record.references) == (
                request.schema_type, parsed.canonical, request.references
            ):  # fmt: skip
                return record
        for record in candidates:
            same = (record.schema_type, record.references) == (
                request.schema_type, request.references
            )  # fmt: skip
            if same and self.parsed_record(record).equivalent(parsed):
                return record
        raise errors.schema_not_found()

    def referenced_by(self, subject: str, version: str | int) -> list[int]:
        record = self.version(subject, version, deleted=True)
        return self.state.referenced_by(subject, record.version)

    def compatibility_level(self, subject: str | None) -> str:
        if subject is not None:
            level = self.state.compatibility(subject)
            if level is not None:
                return level
        return self.state.compatibility(None) or DEFAULT_COMPATIBILITY

    def mode_of(self, subject: str | None) -> str:
        if subject is not None:
            mode = self.state.mode(subject)
            if mode is not None:
                return mode
        return self.state.mode(None) or DEFAULT_MODE

    def check_compatibility(
        self, subject: str, version: str | int | None, request: SchemaRequest
    ) -> list[str]:
        """Messages if ``request`` breaks the subject's level against one version (or, with
        ``version`` None, against the versions the level covers); [] if compatible."""
        parsed = self.parse(request.schema_type, request.schema, request.references)
        level = self.compatibility_level(subject)
        live = sorted(
            (v, r) for v, r in self.state.subject_versions(subject).items() if not r.deleted
        )
        if version is None:
            previous = [(v, self.parsed_record(r)) for v, r in live]
            return compat.check(level, parsed, previous)
        number = parse_version(version)
        if number == -1 and not live:
            return []
        record = self.version(subject, number)
        return compat.check(level, parsed, [(record.version, self.parsed_record(record))])

    # -- writes ------------------------------------------------------------------------------

    def register(self, subject: str, request: SchemaRequest) -> SchemaRecord:
        check_subject(subject)
        with self._write_lock:
            self._sync()
            mode = self.mode_of(subject)
            if mode in ("READONLY", "READONLY_OVERRIDE"):
                raise errors.not_permitted(f"Subject {subject} is in read-only mode")
            if request.id is not None and mode != "IMPORT":
                raise errors.not_permitted(f"Subject {subject} is not in import mode")
            if request.id is None and mode != "READWRITE":
                raise errors.not_permitted(f"Subject {subject} is not in read-write mode")
            records = self.state.subject_versions(subject)
            live = sorted((v, r) for v, r in records.items() if not r.deleted)
            parsed = self.parse(request.schema_type, request.schema, request.references)
            identity = (request.schema_type, parsed.canonical, request.references)
            schema_id = request.id if request.id is not None else -1
            known = self.state.id_for(*identity)
            if known is not None and schema_id in (-1, known):
                if request.version is None:
                    for _, record in reversed(live):
                        if record.id == known:
                            return record
                schema_id = known
            if request.version is None:
                for _, record in reversed(live):
                    same = (record.references == request.references
                            and record.schema_type == request.schema_type)  # fmt: skip
                    if schema_id in (-1, record.id) and same:  # noqa: SIM102
                        if self.parsed_record(record).equivalent(parsed):
                            return record
            if mode != "IMPORT":
                problems = compat.check(
                    self.compatibility_level(subject), parsed,
                    [(v, self.parsed_record(r)) for v, r in live],
                )  # fmt: skip
                if problems:
                    raise Incompatible(
                        "Schema being registered is incompatible with an earlier schema for "
                        f'subject "{subject}", details: [{", ".join(problems)}]'
                    )
            next_version = max(records, default=0) + 1
            version = request.version or next_version
            if request.version is not None and version != next_version and mode != "IMPORT":
                raise InvalidSchema("Version is not one more than previous version")
            if request.version is not None and version in records:
                raise errors.Unprocessable(
                    f"Version {version} of subject {subject} already exists", 42202
                )
            if schema_id >= 0:
                for other in self.state.by_id(schema_id):
                    if (other.schema_type, other.schema, other.references) != identity:
                        raise errors.id_does_not_match(
                            f"Overwrite new schema with id {schema_id} is not permitted."
                        )
            else:
                schema_id = self.state.max_id + 1
            record = SchemaRecord(
                subject, version, schema_id, request.schema_type, parsed.canonical,
                request.references,
            )  # fmt: skip
            writes: list[tuple[bytes, bytes | None]] = [
                (schema_key(subject, r.version), None)
                for r in records.values()
                if r.deleted and r.id == schema_id and r.version < version
                and not self.state.referenced_by(subject, r.version)
            ]  # fmt: skip
            writes.append((schema_key(subject, version), record.to_value()))
            self._write(writes)
            log.info("schema registered",
                     extra={"subject": subject, "version": version, "id": schema_id})  # fmt: skip
            return record

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        with self._write_lock:
            self._sync()
            records = self.state.subject_versions(subject)
            if not records:
                raise errors.subject_not_found(subject)
            self._writable(subject)
            live = sorted(v for v, r in records.items() if not r.deleted)
            for v in sorted(records):
                if self.state.referenced_by(subject, v):
                    raise errors.reference_exists(f"{{subject={subject},version={v}}}")
            if permanent:
                if live:
                    raise errors.subject_not_soft_deleted(subject)
                self._write([(schema_key(subject, v), None) for v in sorted(records)])
                return sorted(records)
            if not live:
                raise errors.subject_soft_deleted(subject)
            writes: list[tuple[bytes, bytes | None]] = [
                (delete_subject_key(subject), delete_subject_value(subject, live[-1]))
            ]
            if self.state.compatibility(subject) is not None:
                writes.append((config_key(subject), None))
            if self.state.mode(subject) is not None:
                writes.append((mode_key(subject), None))
            self._write(writes)
            return live

    def delete_version(self, subject: str, version: str | int, permanent: bool = False) -> int:
        with self._write_lock:
            self._sync()
            records = self.state.subject_versions(subject)
            if not records:
                raise errors.subject_not_found(subject)
            self._writable(subject)
            number = parse_version(version)
            if number == -1:
                live = [v for v, r in records.items() if not r.deleted]
                if not live:
                    raise errors.subject_not_found(subject)
                number = max(live)
            record = records.get(number)
            if record is None:
                raise errors.version_not_found(number)
            if self.state.referenced_by(subject, number):
                raise errors.reference_exists(f"{{subject={subject},version={number}}}")
            if permanent:
                if not record.deleted:
                    raise errors.version_not_soft_deleted(subject, number)
                self._write([(schema_key(subject, number), None)])
            else:
                if record.deleted:
                    raise errors.version_soft_deleted(subject, number)
                gone = SchemaRecord(
                    subject, number, record.id, record.schema_type, record.schema,
                    record.references, deleted=True,
                )  # fmt: skip
                self._write([(schema_key(subject, number), gone.to_value())])
            return number

    def set_compatibility(self, subject: str | None, level: object) -> str:
        name = compat.level(level)
        with self._write_lock:
            self._sync()
            if subject is not None:
                check_subject(subject)
            if self.mode_of(subject) in ("READONLY", "READONLY_OVERRIDE"):
                raise errors.not_permitted(f"Subject {subject or '(global)'} is in read-only mode")
            self._write([(config_key(subject), config_value(name))])
        return name

    def delete_compatibility(self, subject: str | None) -> str:
        with self._write_lock:
            self._sync()
            previous = self.state.compatibility(subject)
            if (
                subject is not None
                and previous is None
                and not self.state.subject_versions(subject)
            ):
                raise errors.subject_not_found(subject)
            if previous is not None:
                self._write([(config_key(subject), None)])
        return previous or self.compatibility_level(None)

    def set_mode(self, subject: str | None, mode: object, force: bool = False) -> str:
        name = str(mode or "").strip().upper()
        if name not in MODES:
            raise errors.invalid_mode()
        with self._write_lock:
            self._sync()
            if subject is not None:
                check_subject(subject)
            if name == "IMPORT" and not force:
                existing = self.subjects()
                if existing if subject is None else subject in existing:
                    raise errors.not_permitted(
                        "Cannot import since found existing subjects; set force=true to import "
                        "into them anyway"
                    )
            self._write([(mode_key(subject), mode_value(name))])
        return name

    def delete_mode(self, subject: str) -> str:
        with self._write_lock:
            self._sync()
            previous = self.state.mode(subject)
            if previous is None:
                raise errors.no_subject_mode(subject)
            self._write([(mode_key(subject), None)])
        return previous

    # -- plumbing ----------------------------------------------------------------------------

    def _writable(self, subject: str) -> None:
        if self.mode_of(subject) in ("READONLY", "READONLY_OVERRIDE"):
            raise errors.not_permitted(f"Subject {subject} is in read-only mode")

    def _sync(self) -> None:
        try:
            self.log.read_to_end()
        except Exception as exc:
            raise StoreError(f"Error while reading the Kafka store: {exc}", 50002) from None

    def _write(self, records: list[tuple[bytes, bytes | None]]) -> None:
        try:
            self.log.send(records)
            self.log.read_to_end()
        except Exception as exc:
            log.warning("schema store write failed", extra={"error": str(exc)})
            raise StoreError(f"Error while writing to the Kafka store: {exc}", 50001) from None


def parse_version(version: str | int) -> int:
    """A version id: 1..2^31-1, or ``latest``/-1 (as -1); 42202 otherwise."""
    if isinstance(version, int):
        number = version
    else:
        text = str(version).strip()
        if text.lower() == "latest":
            return -1
        try:
            number = int(text)
        except ValueError:
            raise errors.invalid_version(text) from None
    if number == -1:
        return -1
    if not 1 <= number <= MAX_VERSION:
        raise errors.invalid_version(str(version))
    return number


def check_subject(subject: str) -> None:
    if not subject or not subject.strip() or any(ord(c) < 32 for c in subject):
        raise errors.invalid_subject(subject)
