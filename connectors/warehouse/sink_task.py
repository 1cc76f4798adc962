"""WarehouseSinkTask: whole put batches go into database transactions; offsets follow commits.

``put`` turns records into row changes and makes sure their tables fit (DDL in its own
transaction). The changes are then written in one transaction together with the pending
changes of earlier puts: immediately when ``batch.size`` rows are pending or the put was
smaller than the largest seen so far (the consumer has caught up, so waiting would only add
latency), otherwise at the next ``pre_commit``/``flush``. A put batch is never split across
transactions unless a bad record has to be isolated (below). ``pre_commit`` returns only
offsets whose rows are committed in the database, so a crash redelivers exactly the
unconfirmed tail: idempotent with upserts or ``pk.mode=kafka``; duplicates possible with
plain inserts and no key, as with Confluent's sink. Buffering a few puts matters on
PostgreSQL: a transaction costs round trips and a WAL fsync, worth ~10 ms on a busy machine.

Errors, by cause:

* Cannot connect at start (host down, wrong credentials, missing database): ConnectError
  whose message says which setting to check; the task is FAILED.
* The connection breaks (PEP 249 OperationalError/InterfaceError): the transaction rolls
  back, the connection is dropped and ``put`` raises RetriableError; the worker retries the
  same batch and a new connection is made. In ``pre_commit`` the rows simply stay pending.
* A record that does not fit (no key, a missing key field, a value the column type rejects,
  a duplicate key on insert): the failing transaction is split in halves, each in its own
  transaction, until the single bad record is found; the good ones are written. The bad
  record goes to the runtime's errant-record reporter when it offers one
  (``context.errant_record_reporter()``, Kafka Connect's API: ``errors.tolerance`` and the
  dead-letter queue decide), and otherwise is raised as DataError naming the record, which
  fails the task. Nothing is dropped silently.

All calls come from the task's thread.
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
    text = str(orig).strip()
    return f"{type(orig).__name__}: {text.splitlines()[0] if text else ''}"


class WarehouseSinkTask(SinkTask):
    def __init__(self, context: SinkTaskContext) -> None:
        super().__init__(context)
        self.engine: sa.Engine | None = None
        self._conn: sa.Connection | None = None
        self._pending: list[RowChange] = []  # built, not yet committed
        self._pending_offsets: dict[tuple[str, int], int] = {}  # next offset once they are
        self._done: dict[TopicPartition, int] = {}  # next offset committed in the database
        self._largest_put = 0
        self.rows_written = 0
        self.transactions = 0
        self.reported = 0

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = WarehouseSinkConfig.parse(config)
        self.ident = f"{config.get('name', 'warehouse-sink')}-{config.get('task.id', 0)}"
        url = self.config.url()
        self.engine = sa.create_engine(url)
        target = url.render_as_string(hide_password=True)
        try:
            self._connection().execute(sa.text("SELECT 1"))
            self._connection().rollback()
        except Exception as exc:
            self._drop_connection()
            self.engine.dispose()
            self.engine = None
            raise ConnectError(
                f"[{self.ident}] cannot connect to {target} ({describe(exc)}): check "
                "connection.url (host, port, database), connection.user and "
                "connection.password, and that the database accepts connections from here"
            ) from None
        self.builder = RowBuilder(self.config)
        self.tables = Tables(self.engine, self._connection, auto_create=self.config.auto_create,
                             auto_evolve=self.config.auto_evolve,
                             needs_key=self.config.insert_mode != "insert",
                             ident=self.ident)  # fmt: skip
        self.writer = BatchWriter(self.tables, self.config.insert_mode, self.config.batch_size)
        reporter = getattr(self.context, "errant_record_reporter", None)
        self._reporter: Any = reporter() if callable(reporter) else None
        log.info("[%s] writing to %s (insert.mode=%s, pk.mode=%s)", self.ident, target,
                 self.config.insert_mode, self.config.pk_mode)  # fmt: skip

    def _connection(self) -> sa.Connection:
        """The task's one connection, opened on first use and again after a failure.

        One long-lived connection instead of a pool checkout per transaction: no ping round
        trip per batch, and the task's DDL and data statements never interleave."""
        if self._conn is None:
            assert self.engine is not None
            self._conn = self.engine.connect()
        return self._conn

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.invalidate()
                conn.close()
            except Exception:  # already broken: nothing more to release
                log.debug("[%s] closing a broken connection failed", self.ident, exc_info=True)

    def put(self, records: Sequence[SinkRecord]) -> None:
        pending, mark = self._pending, len(self._pending)
        build, ensure = self.builder.build, self.tables.ensure
        fitted = None  # shapes are cached per table, so one identity check skips ensure()
        try:
            for record in records:
                try:
                    change = build(record)
                    if change is not None:
                        if change.shape is not fitted:
                            if ensure(change) is None:
                                self.builder.skipped += 1  # delete/truncate of no table
                                continue
                            fitted = change.shape
                        pending.append(change)
                except DataError as exc:
                    self._bad(record, exc)
            caught_up = len(records) < self._largest_put
            self._largest_put = max(self._largest_put, len(records))
            if len(pending) >= self.config.batch_size or caught_up:
                self._commit_pending()
        except sa.exc.DBAPIError as exc:  # DDL or reflection failed
            del pending[mark:]  # the worker will deliver this batch again
            self._raise(exc, "preparing the table")
        except BaseException:
            del pending[mark:]
            raise
        offsets = self._pending_offsets
        for record in records:
            offsets[(record.topic, record.partition or 0)] = record.offset + 1
        if not pending:
            self._mark_done()

    def _commit_pending(self) -> None:
        """Writes every pending change in one transaction (split only to isolate bad ones)."""
        self._write(self._pending)
        self._pending = []

    def _mark_done(self) -> None:
        done = self._done
        for (topic, partition), offset in self._pending_offsets.items():
            tp = TopicPartition(topic, partition)
            if offset > done.get(tp, -1):
                done[tp] = offset
        self._pending_offsets.clear()

    def _raise(self, exc: BaseException, doing: str) -> None:
        if classify(exc) == "transient":
            self._drop_connection()
            raise RetriableError(f"[{self.ident}] database unavailable while {doing}, "
                                 f"rolled back: {describe(exc)}") from exc  # fmt: skip
        raise ConnectError(f"[{self.ident}] {doing} failed: {describe(exc)}") from exc

    def _write(self, changes: list[RowChange]) -> None:
        if not changes:
            return
        try:
            conn = self._connection()
            with conn.begin():
                self.writer.apply(conn, changes)
        except Exception as exc:
            if classify(exc) != "record":
                self._raise(exc, "writing")
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
        self.transactions += 1

    def _bad(self, record: SinkRecord, exc: DataError) -> None:
        if self._reporter is None:
            raise exc
        report: Callable[..., Any] = getattr(self._reporter, "report", self._reporter)
        log.warning("[%s] %s", self.ident, exc)
        report(record, exc)
        self.reported += 1

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commits the pending changes; a broken connection leaves them pending for later."""
        try:
            self._commit_pending()
        except RetriableError as exc:
            log.warning("[%s] %s; offsets stay where they were", self.ident, exc)
            return
        self._mark_done()

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        """Only offsets whose rows are committed in the database."""
        self.flush(offsets)
        done = self._done
        return {tp: min(off, done[tp]) for tp, off in offsets.items() if tp in done}

    def close(self, partitions: Sequence[TopicPartition]) -> None:
        """Revoked partitions: their uncommitted changes are dropped (the next owner gets the
        records again from the committed offset)."""
        gone = {(tp.topic, tp.partition) for tp in partitions}
        self._pending = [c for c in self._pending
                         if (c.record.topic, c.record.partition or 0) not in gone]  # fmt: skip
        for key in gone:
            self._pending_offsets.pop(key, None)
        for tp in partitions:
            self._done.pop(tp, None)

    def stop(self) -> None:
        if self._pending:
            log.info("[%s] stopping with %d uncommitted rows; they will be redelivered",
                     self.ident, len(self._pending))  # fmt: skip
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self.engine is not None:
            self.engine.dispose()
            self.engine = None
        log.info("[%s] stopped", getattr(self, "ident", "warehouse-sink"))
