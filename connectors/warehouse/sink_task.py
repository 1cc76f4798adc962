"""WarehouseSinkTask: whole put batches go into database transactions; offsets follow commits.

``put`` turns records into row changes and makes sure their tables fit (DDL in its own
transaction). The changes are then written in one transaction together with the pending
changes of earlier puts: as soon as ``batch.size`` rows are pending or the put was smaller
than the largest seen so far (the consumer has caught up, so waiting would only add latency),
otherwise at the next ``pre_commit``/``flush``. A put batch is never split across
transactions unless a bad record has to be isolated (below). ``pre_commit`` returns only
offsets whose rows are committed in the database, so a crash redelivers exactly the
unconfirmed tail: idempotent with upserts or ``pk.mode=kafka``; duplicates possible with
plain inserts and no key, as with Confluent's sink. Buffering a few puts matters on
PostgreSQL: a transaction costs round trips and a WAL fsync, worth ~10 ms on a busy machine.

Pipelining: a transaction runs on the task's one writer thread while ``put`` returns and the
task builds the next batch's rows (the database's work and the WAL fsync overlap the
task's Python work; the waits release the GIL). On PostgreSQL the writer formats the COPY
data itself, a block at a time while the server parses the previous one, as a plain psycopg
COPY does; the task only checks that binary COPY fits the rows' types. At most one
transaction is in flight and the next is handed over only after it finished, so
transactions commit in record order. Its
outcome is collected by the next hand-over, ``flush``/``pre_commit`` (which wait for it),
``close`` and any DDL (which needs the connection); a ``put`` also collects it when it has
already finished. Its offsets count as done only then. A failed transaction is dealt with in
the task's thread as if ``put`` had run it: its changes go back to the front of the pending
ones, so nothing is lost, and the error surfaces from whichever call collected it.

Errors, by cause:

* Cannot connect at start (host down, wrong credentials, missing database): ConnectError
  whose message says which setting to check; the task is FAILED.
* The connection breaks (PEP 249 OperationalError/InterfaceError): the transaction rolls
  back, the connection is dropped and ``put`` raises RetriableError (the put that collects
  the failed transaction: its own records are not taken, the failed transaction's changes are
  pending again); the worker retries that batch and a new connection is made. In
  ``pre_commit`` the rows simply stay pending.
* A record that does not fit (no key, a missing key field, a value the column type rejects,
  a duplicate key on insert): the failing transaction is split in halves, each in its own
  transaction, until the single bad record is found; the good ones are written. The bad
  record goes to the runtime's errant-record reporter when it offers one
  (``context.errant_record_reporter()``, Kafka Connect's API: ``errors.tolerance`` and the
  dead-letter queue decide), and otherwise is raised as DataError naming the record, which
  fails the task. Nothing is dropped silently.

All calls come from the task's thread; the writer thread only runs ``_apply`` on the
connection, which nothing else touches while a transaction is in flight.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from operator import attrgetter
from typing import Any

import sqlalchemy as sa

from connectors.warehouse import sql
from connectors.warehouse.config import WarehouseSinkConfig
from connectors.warehouse.rows import (
    RowBuilder,
    RowChange,
    RowRun,
    count_rows,
    expand,
    rows_of,
    where,
)
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
_PARTITION, _TOPIC = attrgetter("partition"), attrgetter("topic")
_SHAPE, _ACTION, _TABLE, _ROW = (attrgetter(a) for a in ("shape", "action", "table", "row"))
Pending = list[RowChange | RowRun]
_GROUP = 8  # a transaction grows to at most this many batch.size while the previous commits


def _next_offsets(records: Sequence[SinkRecord]) -> dict[tuple[str, int], int]:
    """(topic, partition) -> offset after its last record; one partition found in C."""
    if not records:
        return {}
    first, n = records[0], len(records)
    if list(map(_PARTITION, records)).count(first.partition) == n and \
            list(map(_TOPIC, records)).count(first.topic) == n:  # fmt: skip
        return {(first.topic, first.partition or 0): records[-1].offset + 1}
    return {(r.topic, r.partition or 0): r.offset + 1 for r in records}


def _sqlstate(exc: BaseException) -> str | None:
    orig = exc.orig if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None else exc
    return getattr(orig, "sqlstate", None)


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
        self._pending: Pending = []  # built, not yet committed (a run is a put's worth)
        self._pending_rows = 0  # rows in _pending
        self._pending_offsets: dict[tuple[str, int], int] = {}  # next offset once they are
        self._done: dict[TopicPartition, int] = {}  # next offset committed in the database
        # The transaction on the writer thread: (its outcome, its changes, their offsets, rows).
        self._inflight: tuple[Future[None], Pending, dict[tuple[str, int], int], int] | None
        self._inflight = None
        self._pool: ThreadPoolExecutor | None = None
        self._copy_tx: Any = None  # formats COPY rows in the task thread (PostgreSQL)
        self._binary = True  # binary COPY where the columns allow; off after the server refused
        self._kinds: dict[tuple[int, tuple[str, ...]], tuple[sa.Table, tuple[str, ...] | None]]
        self._kinds = {}
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
        self._copy_tx = sql.copy_transformer(self._connection())
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=f"{self.ident}-writer")
        self.tables = Tables(self.engine, self._ddl_connection,
                             auto_create=self.config.auto_create,
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

    def _ddl_connection(self) -> sa.Connection:
        """The connection for reflection and DDL, once no transaction is in flight on it (its
        outcome is collected later: raising here would interrupt ``ensure``)."""
        if self._inflight is not None:
            self._inflight[0].exception()  # waits; never raises
        return self._connection()

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.invalidate()
                conn.close()
            except Exception:  # already broken: nothing more to release
                log.debug("[%s] closing a broken connection failed", self.ident, exc_info=True)

    def put(self, records: Sequence[SinkRecord]) -> None:
        self._collect(block=False)  # a failed transaction raises here, before taking records
        pending, mark = self._pending, len(self._pending)
        build, ensure = self.builder.build, self.tables.ensure
        fitted = None  # shapes are cached per table, so one identity check skips ensure()
        mine = -1  # how many pending changes are this put's, once known
        try:
            todo: Sequence[SinkRecord] = records
            run = self.builder.build_run(records) if len(records) > 1 else None
            if run is not None:
                try:
                    if ensure(run) is not None:  # type: ignore[arg-type]  # reads like a change
                        pending.append(run)
                        self._pending_rows += len(run.rows)
                        todo = ()  # all taken
                except DataError:  # record by record below, which reports each one
                    pass
            base = len(pending)
            for record in todo:
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
            self._pending_rows += len(pending) - base
            offsets = _next_offsets(records)
            caught_up = len(records) < self._largest_put
            self._largest_put = max(self._largest_put, len(records))
            size = self.config.batch_size
            rows = self._pending_rows
            if caught_up or (rows >= size and not self._committing(rows)):
                mine = len(pending) - mark
                self._submit(offsets)
            else:
                self._pending_offsets.update(offsets)
        except BaseException as exc:
            # The worker will deliver this batch again: forget its changes (its offsets were
            # not taken yet). They are the tail of the pending list, even if a failed
            # transaction was put back in front of them.
            if self._pending is pending:
                if mine < 0:
                    mine = len(pending) - mark
                del pending[len(pending) - mine :]
                self._pending_rows = count_rows(pending)
            if isinstance(exc, sa.exc.DBAPIError):  # DDL or reflection failed
                self._raise(exc, "preparing the table")
            raise
        if not self._pending and self._inflight is None:
            self._mark_done()
        elif self._inflight is not None:
            # Lets the writer thread take the GIL now if it waits for it: it streams the COPY
            # and gives the GIL up whenever the socket is full. A caller that goes straight
            # into its next put would otherwise keep it for a whole switch interval (5 ms),
            # long enough for the server to run out of data.
            time.sleep(0)

    def _committing(self, pending: int) -> bool:
        """True while the transaction in flight runs and ``pending`` rows may still wait for
        it (group commit: up to ``_GROUP`` x batch.size), instead of blocking the task."""
        inflight = self._inflight
        return inflight is not None and not inflight[0].done() and \
            pending < self.config.batch_size * _GROUP  # fmt: skip

    def _submit(self, offsets: Mapping[tuple[str, int], int] | None = None) -> None:
        """Hands every pending change to the writer thread as one transaction, after
        collecting the one in flight (waiting for it). ``offsets``: the calling put's, which
        become pending only once the collection did not raise."""
        # Planned before waiting, so that its checks overlap the transaction in flight.
        # Collecting does not change the pending list unless it raises (then it is unused).
        plan = self._copy_plan(self._pending)
        self._collect(block=True)
        if offsets:
            self._pending_offsets.update(offsets)
        if not self._pending:
            return
        changes, self._pending = self._pending, []
        rows, self._pending_rows = self._pending_rows, 0
        offsets, self._pending_offsets = self._pending_offsets, {}
        assert self._pool is not None
        self._inflight = (self._pool.submit(self._apply, changes, plan), changes, offsets, rows)

    def _copy_plan(self, changes: Pending) -> sql.BinaryCopy | None:
        """On PostgreSQL, binary COPY for a batch of one table, action and shape, where every
        column's type allows it (cheaper to format and to parse than text). The writer
        thread formats the rows while it sends them; here only the types are checked.
        Runs (``RowRun``) give their rows as they are."""
        tx = self._copy_tx
        n = len(changes)
        if tx is None or not n or not self._binary:
            return None
        first = changes[0]
        if list(map(id, map(_SHAPE, changes))).count(id(first.shape)) != n or \
                list(map(_ACTION, changes)).count("write") != n or \
                list(map(_TABLE, changes)).count(first.table) != n:  # fmt: skip
            return None
        rows = rows_of(changes) if RowRun in set(map(type, changes)) else list(map(_ROW, changes))
        if len(rows) < 2:
            return None
        try:
            kinds = self._binary_kinds(first.table, tuple(rows[0]))
            return sql.binary_copy(rows, tx, kinds, first.shape.typed)
        except Exception:  # e.g. an unhashable value: the text COPY will say what is wrong
            return None

    def _binary_kinds(self, name: str, columns: tuple[str, ...]) -> tuple[str, ...] | None:
        table = self.tables.table(name)
        key = (id(table), columns)
        hit = self._kinds.get(key)
        if hit is None:
            assert self.engine is not None
            if len(self._kinds) > 1000:
                self._kinds.clear()
            hit = self._kinds[key] = (table, sql.binary_kinds(table, columns, self.engine.dialect))
        return hit[1]

    def _apply(
        self, changes: Sequence[RowChange | RowRun], binary: sql.BinaryCopy | None = None
    ) -> None:
        """One transaction of ``changes``; runs on the writer thread. A binary COPY that meets
        a value its dumper refuses is rolled back and the transaction runs again as text."""
        conn = self._connection()
        try:
            with conn.begin():
                self.writer.apply(conn, changes, binary)
        except sql.BinaryRefused as exc:
            log.debug("[%s] binary COPY refused a value (%s); writing the batch as text",
                      self.ident, exc)  # fmt: skip
            with conn.begin():
                self.writer.apply(conn, changes)

    def _collect(self, block: bool) -> None:
        """Settles the transaction in flight (if finished, or waiting when ``block``): marks
        its offsets done, or isolates its bad records, or puts its changes back in front of
        the pending ones and raises (RetriableError for a lost connection)."""
        inflight = self._inflight
        if inflight is None or not (block or inflight[0].done()):
            return
        self._inflight = None
        future, changes, offsets, rows = inflight
        exc = future.exception()
        if exc is not None and self._binary and _sqlstate(exc) == "22P03":
            log.warning("[%s] the database refused binary COPY data (%s); using text from now "
                        "on", self.ident, describe(exc))  # fmt: skip
            self._binary = False
        if exc is not None and classify(exc) == "record":
            log.debug("[%s] batch of %d failed (%s); splitting", self.ident, len(changes),
                      describe(exc))  # fmt: skip
            singles = expand(changes)
            try:
                self._isolate(singles)
            except BaseException:
                self._restore(singles, offsets, rows)
                raise
            exc = None
        elif exc is None:
            self.rows_written += rows
            self.transactions += 1
        if exc is not None:
            self._restore(changes, offsets, rows)
            self._raise(exc, "writing")
        done = self._done
        for (topic, partition), offset in offsets.items():
            tp = TopicPartition(topic, partition)
            if offset > done.get(tp, -1):
                done[tp] = offset

    def _restore(
        self, changes: Sequence[RowChange | RowRun], offsets: dict[tuple[str, int], int], rows: int
    ) -> None:
        """A failed transaction's changes (``rows`` rows) become pending again, ahead of the
        newer ones."""
        self._pending[:0] = changes
        self._pending_rows += rows
        for key, offset in offsets.items():
            self._pending_offsets.setdefault(key, offset)  # a newer put's offset is higher

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
        """``changes`` in one transaction, in the task's thread, split to isolate bad ones."""
        if not changes:
            return
        try:
            self._apply(changes)
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
            self._isolate(changes)
            return
        self.rows_written += len(changes)
        self.transactions += 1

    def _isolate(self, changes: list[RowChange]) -> None:
        """A batch failed on a record: each half in its own transaction, down to the record."""
        if len(changes) == 1:
            self._write(changes)
            return
        mid = len(changes) // 2
        self._write(changes[:mid])
        self._write(changes[mid:])

    def _bad(self, record: SinkRecord, exc: DataError) -> None:
        if self._reporter is None:
            raise exc
        report: Callable[..., Any] = getattr(self._reporter, "report", self._reporter)
        log.warning("[%s] %s", self.ident, exc)
        report(record, exc)
        self.reported += 1

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commits the pending changes and waits for them; a broken connection leaves them
        pending for later."""
        try:
            self._submit()
            self._collect(block=True)
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
        try:
            self._collect(block=True)
        except RetriableError as exc:  # its changes are pending again; dropped below if gone
            log.warning("[%s] %s", self.ident, exc)
        gone = {(tp.topic, tp.partition) for tp in partitions}
        self._pending = [c for c in expand(self._pending)
                         if (c.record.topic, c.record.partition or 0) not in gone]  # fmt: skip
        self._pending_rows = len(self._pending)
        for key in gone:
            self._pending_offsets.pop(key, None)
        for tp in partitions:
            self._done.pop(tp, None)

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)  # lets a transaction in flight end first
            self._pool = None
        uncommitted = self._pending_rows
        if self._inflight is not None and self._inflight[0].exception() is not None:
            uncommitted += self._inflight[3]
        self._inflight = None
        if uncommitted:
            log.info("[%s] stopping with %d uncommitted rows; they will be redelivered",
                     self.ident, uncommitted)  # fmt: skip
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self.engine is not None:
            self.engine.dispose()
            self.engine = None
        log.info("[%s] stopped", getattr(self, "ident", "warehouse-sink"))
