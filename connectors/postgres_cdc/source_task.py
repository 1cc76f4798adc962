"""PostgresCdcSourceTask: initial snapshot, then the replication stream, one thread.

Start-up (``start``): connect and check the server (wal_level, REPLICATION), create the
publication if missing (before the slot: a slot decodes with the publications that existed
when it was created), then decide the snapshot from ``snapshot.mode`` and the committed
offset. A snapshot creates the slot with an exported snapshot (see ``snapshot``); streaming
begins only when the snapshot is read, at the slot's consistent point.

Offsets and the slot: source partition ``{"server": topic.prefix}``; offsets as in
``_stream``. ``commit_records`` (producer thread) notes the last acknowledged offset;
``commit`` (task thread, after the worker stored offsets) confirms to the server the commit
LSN of what was acknowledged before the *previous* commit, which the store certainly holds,
so the slot's ``confirmed_flush_lsn`` never passes the stored offset. After any restart the
stored offset filters what the server resends: nothing lost, nothing emitted twice unless it
was emitted but not yet acknowledged at a crash.

Exactly once (the worker's ``exactly.once.source.support=enabled``): offsets and records commit
in one transaction and ``commit`` runs after it, so the slot is confirmed only up to a
committed transaction. With ``transaction.boundary=connector`` the task keeps a snapshot in
one transaction (a crash mid-snapshot leaves none of it visible) and commits after each poll
of the stream.

Dropped connections (a database restart): ``poll`` raises RetriableError, the worker calls
``poll`` again, and the task reconnects with backoff, resuming after the last *emitted* record.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, NoReturn

import psycopg

from connectors.postgres_cdc import _setup
from connectors.postgres_cdc._stream import ChangeDecoder, Position, relation_columns
from connectors.postgres_cdc.catalog import Catalog
from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.events import ColumnSpec, TableSchema, heartbeat_record  # fmt: skip
from connectors.postgres_cdc.pgoutput import Relation
from connectors.postgres_cdc.replication import (
    XLOG_PAYLOAD,
    ReplicationConnection,
    keepalive,
    lsn_to_str,
    xlog_start,
)
from connectors.postgres_cdc.snapshot import SnapshotEmitter, SnapshotReader
from hub.api import ConnectError, RetriableError, SourceRecord, SourceTask, SourceTaskContext

log = logging.getLogger(__name__)


class PostgresCdcSourceTask(SourceTask):
    """Threads: ``start``/``poll``/``commit`` on the task thread (which owns the connections),
    ``commit_records`` on the producer's, ``stop`` on any; ``_lock`` keeps ``stop`` from closing
    connections under a running ``poll`` (which returns within ``poll.interval.ms``)."""

    def __init__(self, context: SourceTaskContext) -> None:
        super().__init__(context)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._repl: ReplicationConnection | None = None
        self._meta: psycopg.Connection[Any] | None = None
        self._snapshot: SnapshotEmitter | None = None
        self.ident = "postgres-cdc"
        self._confirmed = self._wal_end = self._server_wal_end = 0  # set again by start
        self._lag_ms = 0.0

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = c = PostgresCdcConfig.parse(config)
        self.ident = f"{config.get('name', 'postgres-cdc')}|{c.topic_prefix}"
        self.partition = {"server": c.topic_prefix}
        self._filter = c.table_filter()
        self._columns = c.column_rules()
        self._acked: Mapping[str, Any] | None = None  # written by the producer thread
        self._acked_before_last_commit: Mapping[str, Any] | None = None
        self._confirmed = 0  # highest LSN reported as flushed to the server
        self._wal_end = 0
        self._server_wal_end = 0  # the server's WAL end, from its keepalives (metrics)
        self._lag_ms = 0.0  # commit-to-read delay of the last transaction read (metrics)
        self._emitted = Position(0, 0)
        self._next_heartbeat = time.monotonic() + c.heartbeat_interval_ms / 1000
        self._retry_at, self._backoff = 0.0, 0.1
        self._streaming_done = False
        try:
            self._prepare(c)
        except BaseException:
            self._close_connections()  # a failed start leaves no connection (or slot user) behind
            raise
        log.info("[%s] started (snapshot.mode=%s)", self.ident, c.snapshot_mode)

    def _prepare(self, c: PostgresCdcConfig) -> None:
        offset = self.context.offset_reader.offset(self.partition)
        self._meta = _setup.open_connection(c)
        self._catalog = Catalog(self._meta)
        _setup.check_server(self._meta, c)
        tables = [(s, t) for s, t, _ in _setup.user_tables(self._meta) if self._filter(s, t)]
        _setup.ensure_publication(self._meta, c, tables)
        slot = _setup.wait_for_inactive_slot(self._meta, c.slot_name)
        _setup.check_slot(slot, c)
        self.decoder = ChangeDecoder(
            prefix=c.topic_prefix, dbname=c.dbname, partition=self.partition,
            relation_schema=self._relation_schema, tombstones=c.tombstones_on_delete,
            skipped=c.skipped, resume=Position.from_offset(dict(offset) if offset else None),
            transaction_topic=c.transaction_topic if c.provide_transaction_metadata else None,
        )  # fmt: skip
        if _setup.needs_snapshot(c, offset, slot):
            self._begin_snapshot(slot.exists)
        elif not c.streams:  # configuration_based, neither snapshot nor stream: nothing to do
            self._streaming_done = True
            log.warning("[%s] snapshot.mode=%s takes no snapshot and does not stream: the task "
                        "emits nothing", self.ident, c.snapshot_mode)  # fmt: skip
        else:
            self._confirmed = max(slot.confirmed_flush, self.decoder.resume.commit)
            if not slot.exists:
                if offset:
                    log.warning("[%s] slot %s is gone: changes since the last committed offset "
                                "may be lost (snapshot.mode=when_needed re-snapshots instead)",
                                self.ident, c.slot_name)  # fmt: skip
                self._repl = self._replication()
                self._confirmed, _ = self._repl.create_slot(c.slot_name, export_snapshot=False)
            self._start_streaming()

    # -- start-up helpers ------------------------------------------------------------------

    def _replication(self) -> ReplicationConnection:
        try:
            return ReplicationConnection(self.config.conninfo(), self.ident)
        except psycopg.Error as exc:
            raise _setup.connect_error(exc, self.config) from None

    def _begin_snapshot(self, slot_exists: bool) -> None:
        c = self.config
        self._repl = self._replication()
        if slot_exists:  # left by an unfinished snapshot or a re-snapshot: start it over
            log.warning("[%s] dropping slot %s to take a new snapshot", self.ident, c.slot_name)
            self._repl.drop_slot(c.slot_name)
        try:
            point, name = self._repl.create_slot(c.slot_name, export_snapshot=True)
        except psycopg.Error as exc:
            raise ConnectError(f"cannot create replication slot {c.slot_name!r}: {exc}") from None
        assert name is not None
        reader = SnapshotReader(c, name, self._filter, self._make_schema, self.ident)
        self._confirmed = point
        self._snapshot = SnapshotEmitter(reader, self.partition, point, c)
        log.info("[%s] snapshot of %d table(s) at %s", self.ident, len(reader.tables),
                 lsn_to_str(point))  # fmt: skip

    def _make_schema(self, namespace: str, table: str, columns: list[ColumnSpec],
                     catalog: Catalog) -> TableSchema:  # fmt: skip
        c = self.config
        rules = self._columns.for_table(
            namespace, table, [(col.name, col.type_oid, col.typmod) for col in columns]
        )
        schema = TableSchema(c.topic_prefix, namespace, table, columns, catalog.type_info,
                             c.decimal_handling_mode, rules,
                             c.unavailable_value_placeholder)  # fmt: skip
        if not schema.has_primary_key and not schema.custom_key:
            log.warning("[%s] table %s.%s has no primary key: its record key is the whole row",
                        self.ident, namespace, table)  # fmt: skip
        return schema

    def _relation_schema(self, rel: Relation) -> TableSchema | None:
        if not self._filter(rel.namespace, rel.name):
            return None
        self._catalog.forget_types()  # a Relation follows DDL: enum labels may have changed
        keys, not_null = self._catalog.keys_and_not_null(rel.oid)
        return self._make_schema(rel.namespace, rel.name,
                                 relation_columns(rel, keys, not_null), self._catalog)  # fmt: skip

    def _start_streaming(self) -> None:
        if self._repl is None:
            self._repl = self._replication()
        self._repl.start(self.config.slot_name, self.config.publication_name, self._confirmed)
        self._repl.send_status(self._confirmed, self._confirmed)

    # -- polling ---------------------------------------------------------------------------

    def poll(self) -> list[SourceRecord] | None:
        out = self._poll()
        transactions = getattr(self.context, "transaction_context", None)
        if out and transactions is not None and self._snapshot is None:
            # transaction.boundary=connector (exactly once): a snapshot stays in one
            # transaction until its last record; each poll of the stream commits.
            transactions.commit_transaction()
        return out

    def _poll(self) -> list[SourceRecord] | None:
        with self._lock:
            if self._stopping.is_set():
                return None
            if self._snapshot is not None:
                return self._poll_snapshot()
            if self._streaming_done:
                self._stopping.wait(self.config.poll_interval_ms / 1000)
                return None
            try:
                return self._poll_stream()
            except (psycopg.Error, OSError, RetriableError) as exc:
                self._connection_lost(exc)  # raises: the worker retries poll() after a pause

    def _poll_snapshot(self) -> list[SourceRecord] | None:
        snap = self._snapshot
        assert snap is not None
        try:
            out = snap.next_batch(self.config.max_batch_size)
        except psycopg.OperationalError as exc:
            raise ConnectError(
                f"lost the connection to PostgreSQL during the snapshot ({exc}); restart the "
                "task: the snapshot starts over from a new exported snapshot"
            ) from None
        if snap.done:
            self._snapshot = None
            snap.close()
            if not self.config.streams:
                self._streaming_done = True
                self._close_connections()  # nothing more to read; the slot stays (see docs)
                log.info("[%s] snapshot done; snapshot.mode=%s: not streaming", self.ident,
                         self.config.snapshot_mode)  # fmt: skip
            else:
                self._start_streaming()
        return out or None

    def _poll_stream(self) -> list[SourceRecord] | None:
        if self._repl is None or not self._repl.streaming:
            if time.monotonic() < self._retry_at:
                self._stopping.wait(min(0.5, self._retry_at - time.monotonic()))
                return None
            self._reconnect()
        repl = self._repl
        assert repl is not None
        out: list[SourceRecord] = []
        limit, wait = self.config.max_batch_size, self.config.poll_interval_ms / 1000
        decoder = self.decoder
        deadline = time.monotonic() + wait
        read, handle = repl.read_raw, decoder.handle
        while len(out) < limit:
            buf = read(0.0 if out else max(0.0, deadline - time.monotonic()))
            if buf is None:
                if out or time.monotonic() >= deadline or self._stopping.is_set():
                    break
                continue
            if buf[0] == 119:  # 'w' XLogData: one pgoutput message
                handle(xlog_start(buf, 1)[0], buf[XLOG_PAYLOAD:], out)
            elif buf[0] == 107:  # 'k' keepalive
                msg = keepalive(buf)
                self._server_wal_end = max(self._server_wal_end, msg.wal_end)
                if not decoder.in_tx:
                    self._wal_end = max(self._wal_end, msg.wal_end)
                if msg.reply:
                    repl.send_status(self._confirmed, self._wal_end)
        if out:
            self._emitted = Position(out[-1].source_offset["lsn_commit"],
                                     out[-1].source_offset["event_serial_no"])  # fmt: skip
        if not decoder.in_tx:
            self._wal_end = max(self._wal_end, decoder.last_commit_end)
        if out and decoder.last_commit_ms:
            self._lag_ms = max(time.time() * 1000 - decoder.last_commit_ms, 0.0)
        self._heartbeat(out)
        if repl.status_due(self.config.status_update_interval_ms / 1000):
            repl.send_status(self._confirmed, max(self._wal_end, self._confirmed))
        return out or None

    def _heartbeat(self, out: list[SourceRecord]) -> None:
        """Every heartbeat.interval.ms between transactions: a record whose offset (once
        committed) lets the slot advance past WAL this connector had no change to emit for."""
        interval = self.config.heartbeat_interval_ms
        now = time.monotonic()
        if not interval or now < self._next_heartbeat or self.decoder.in_tx:
            return
        self._next_heartbeat = now + interval / 1000
        position = max(self._wal_end, self._emitted.commit)
        if position > self._emitted.commit:
            self._emitted = Position(position, 0)
        offset = {"lsn_commit": self._emitted.commit, "event_serial_no": self._emitted.serial,
                  "lsn": position, "heartbeat": True}  # fmt: skip
        c = self.config
        topic = f"{c.heartbeat_topics_prefix}.{c.topic_prefix}"
        out.append(heartbeat_record(topic, c.topic_prefix, self.partition, offset))
        if self._repl is not None:  # ask for a keepalive: the next heartbeat sees a fresh WAL end
            self._repl.send_status(self._confirmed, self._wal_end, reply=True)

    def _connection_lost(self, exc: Exception) -> NoReturn:
        if isinstance(exc, ConnectError) and not isinstance(exc, RetriableError):
            raise exc
        self._close_connections()
        self._retry_at = time.monotonic() + self._backoff
        self._backoff = min(self._backoff * 2, self.config.retriable_restart_wait_ms / 1000)
        log.warning("[%s] lost the connection to PostgreSQL, reconnecting: %s", self.ident, exc)
        raise RetriableError(f"PostgreSQL connection lost: {exc}") from None

    def _reconnect(self) -> None:
        self._meta = _setup.open_connection(self.config)
        self._catalog = Catalog(self._meta)
        self.decoder.reset(self._emitted)
        self._start_streaming()
        self._backoff = 0.1
        log.info("[%s] reconnected; resuming after %s", self.ident, self._emitted)

    # -- offsets and the slot -------------------------------------------------------------

    def commit_records(self, records: list[SourceRecord]) -> None:
        # One call per poll result, in poll order (not commit_record per record, which would
        # also take the worker off its fast path): the last record's offset covers the rest.
        if records:
            self._acked = records[-1].source_offset

    def commit(self) -> None:
        safe, self._acked_before_last_commit = self._acked_before_last_commit, self._acked
        if not safe or "lsn_commit" not in safe:
            return
        lsn = int(safe["lsn_commit"])
        if lsn <= self._confirmed:
            return
        with self._lock:
            self._confirmed = lsn
            if self._repl is not None and self._repl.streaming:
                try:
                    self._repl.send_status(self._confirmed, max(self._wal_end, lsn))
                except (psycopg.Error, OSError, RetriableError) as exc:
                    log.debug("[%s] status update failed: %s", self.ident, exc)

    # -- stopping --------------------------------------------------------------------------

    def metrics(self) -> Mapping[str, float]:
        """Replication lag as operators watch it: bytes of WAL the server has beyond what this
        task confirmed (the slot's ``confirmed_flush_lsn`` vs the server's WAL end, like
        ``pg_wal_lsn_diff``), and milliseconds between the commit of the last transaction read
        and its reading (Debezium's ``MilliSecondsBehindSource``)."""
        end = max(self._server_wal_end, self._wal_end)
        return {
            "replication_lag_bytes": float(max(end - self._confirmed, 0)) if end else 0.0,
            "replication_lag_ms": self._lag_ms,
            "snapshot_running": 1.0 if self._snapshot is not None else 0.0,
        }

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            if self._snapshot is not None:
                self._snapshot.close()
                self._snapshot = None
            self._close_connections()
            if getattr(self, "config", None) is not None and self.config.slot_drop_on_stop:
                _setup.drop_slot(self.config)
        log.info("[%s] stopped", self.ident)

    def _close_connections(self) -> None:
        if self._repl is not None:
            self._repl.close()
            self._repl = None
        if self._meta is not None:
            with contextlib.suppress(psycopg.Error):
                self._meta.close()
            self._meta = None

    @property
    def confirmed_lsn(self) -> int:
        """The LSN last reported to the server as flushed (for tests and status)."""
        return self._confirmed
