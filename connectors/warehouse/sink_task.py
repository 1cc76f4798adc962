"""WarehouseSinkTask: each ``put`` batch becomes one database transaction.

``put`` turns records into row changes, makes sure their tables fit (DDL in its own
transaction), then applies the whole batch in one transaction and only then advances the
offsets ``pre_commit`` returns: the group never commits a record the database has not
committed, so a crash redelivers exactly the unconfirmed tail (idempotent with upserts or
``pk.mode=kafka``; duplicates possible with plain inserts and no key, as in Confluent's sink).

Errors, by cause:

* Cannot connect at start (host down, wrong credentials, missing database): ConnectError
  whose message says which setting to check; the task is FAILED.
* The connection breaks mid-batch (PEP 249 OperationalError/InterfaceError): the transaction
  rolled back, RetriableError, and the worker gives ``put`` the same batch again.
* A record that does not fit (no key, a missing key field, a value the column type rejects,
  a duplicate key on insert): the failing batch is split in halves, each in its own
  transaction, until the single bad record is found; the good ones are written. The bad
  record is handed to the runtime's errant-record reporter when it offers one
  (``context.errant_record_reporter()``, Kafka Connect's API: ``errors.tolerance`` and the
  dead-letter queue then decide), and otherwise raised as DataError naming the record, which
  fails the task. Nothing is dropped silently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from connectors.warehouse.config import WarehouseSinkConfig
from connectors.warehouse.rows import RowBuilder, RowChange, where
from connectors.warehouse.tables import Tables
from connectors.warehouse.writer import BatchWriter
from hub.api import (
    ConnectError,
    DataError,
    RetriableError,
    SinkRecord,
    SinkTask,
    SinkTaskContext,
    TopicPartition,
)

log = logging.getLogger(__name__)

_TRANSIENT = frozenset({"OperationalError", "InterfaceError"})
_RECORD = frozenset({"DataError", "IntegrityError", "ProgrammingError", "NotSupportedError"})
_SETUP_SQLSTATES = frozenset({"42501", "25006"})  # insufficient privilege, read-only transaction


def classify(exc: BaseException) -> str:
    """'transient', 'record' or 'other', from the PEP 249 class of the driver's exception."""
    orig = exc.orig if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None else exc
    if isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated:
        return "transient"
    if getattr(orig, "sqlstate", None) in _SETUP_SQLSTATES:
        return "other"
    names = {cls.__name__ for cls in type(orig).__mro__}
    if names & _TRANSIENT:
        return "transient"
    if names & _RECORD or isinstance(exc, sa.exc.StatementError):
        return "record"
    return "other"


def describe(exc: BaseException) -> str:
    orig = exc.orig if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None else exc
    return f"{type(orig).__name__}: {str(orig).strip().splitlines()[0] if str(orig) else ''}"


class WarehouseSinkTask(SinkTask):
    def __init__(self, context: SinkTaskContext) -> None:
        super().__init__(context)
        self.engine: sa.Engine | None = None
        self._done: dict[TopicPartition, int] = {}  # next offset committed in the database
        self.rows_written = 0
        self.reported = 0

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = WarehouseSinkConfig.parse(config)
        self.ident = f"{config.get('name', 'warehouse-sink')}-{config.get('task.id', 0)}"
        url = self.config.url()
        self.engine = sa.create_engine(url, pool_pre_ping=True)
        target = url.render_as_string(hide_password=True)
        try:
            with self.engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        except Exception as exc:
            self.engine.dispose()
            self.engine = None
            raise ConnectError(
                f"[{self.ident}] cannot connect to {target} ({describe(exc)}): check "
                "connection.url (host, port, database), connection.user and "
                "connection.password, and that the database accepts connections from here"
            ) from None
        self.builder = RowBuilder(self.config)
        self.tables = Tables(self.engine, auto_create=self.config.auto_create,
                             auto_evolve=self.config.auto_evolve,
                             needs_key=self.config.insert_mode != "insert",
                             ident=self.ident)  # fmt: skip
        self.writer = BatchWriter(self.tables, self.config.insert_mode, self.config.batch_size)
        reporter = getattr(self.context, "errant_record_reporter", None)
        self._reporter: Any = reporter() if callable(reporter) else None
        log.info("[%s] writing to %s (insert.mode=%s, pk.mode=%s)", self.ident, target,
                 self.config.insert_mode, self.config.pk_mode)  # fmt: skip

    def put(self, records: Sequence[SinkRecord]) -> None:
        changes: list[RowChange] = []
        build, ensure = self.builder.build, self.tables.ensure
        for record in records:
            try:
                change = build(record)
                if change is not None:
                    ensure(change)
                    changes.append(change)
            except DataError as exc:
                self._bad(record, exc)
        self._write(changes)
        done = self._done
        for record in records:
            tp = record.topic_partition
            if record.offset + 1 > done.get(tp, -1):
                done[tp] = record.offset + 1

    def _write(self, changes: list[RowChange]) -> None:
        if not changes:
            return
        assert self.engine is not None
        try:
            with self.engine.begin() as conn:
                self.writer.apply(conn, changes)
        except Exception as exc:
            kind = classify(exc)
            if kind == "transient":
                raise RetriableError(f"[{self.ident}] database unavailable, batch rolled back: "
                                     f"{describe(exc)}") from exc  # fmt: skip
            if kind != "record":
                raise ConnectError(f"[{self.ident}] writing failed: {describe(exc)}") from exc
            if len(changes) == 1:
                change = changes[0]
                self._bad(change.record, DataError(
                    f"record {where(change.record)} does not fit table {change.table}: "
                    f"{describe(exc)}"))  # fmt: skip
                return
            log.debug("[%s] batch of %d failed (%s); splitting", self.ident, len(changes),
                      describe(exc))  # fmt: skip
            mid = len(changes) // 2
            self._write(changes[:mid])
            self._write(changes[mid:])
            return
        self.rows_written += len(changes)

    def _bad(self, record: SinkRecord, exc: DataError) -> None:
        if self._reporter is None:
            raise exc
        report: Callable[..., Any] = getattr(self._reporter, "report", self._reporter)
        log.warning("[%s] %s", self.ident, exc)
        report(record, exc)
        self.reported += 1

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        """``put`` returns only after its transaction committed, so what it was given is
        durable; the minimum guards against offsets the worker advanced past a failed put."""
        done = self._done
        return {tp: min(off, done.get(tp, off)) for tp, off in offsets.items()}

    def close(self, partitions: Sequence[TopicPartition]) -> None:
        for tp in partitions:
            self._done.pop(tp, None)

    def stop(self) -> None:
        if self.engine is not None:
            self.engine.dispose()
            self.engine = None
        log.info("[%s] stopped", getattr(self, "ident", "warehouse-sink"))
