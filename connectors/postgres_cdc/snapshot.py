"""The initial snapshot: every included table read inside the slot's exported snapshot.

Exact hand-off: the slot is created with ``EXPORT_SNAPSHOT`` on the replication connection,
which returns the snapshot that sees exactly the transactions committed before the slot's
consistent point. This reader runs on a second connection in ``REPEATABLE READ`` with ``SET
TRANSACTION SNAPSHOT``; streaming starts at the consistent point only after the snapshot is
read. Every row is therefore in the snapshot xor in the stream: no gap, no duplicate.

Memory: each table is read through a server-side cursor ``snapshot.fetch.size`` rows at a
time, so a large table never sits in memory. Values are loaded as the server's text output (a
text loader per column type), so the stream's parsers (pgoutput sends text) apply unchanged.

Crash mid-snapshot: the exported snapshot dies with its connection, so the task starts over
(drops and re-creates the slot, reads everything again: at-least-once, op ``r``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.string import TextLoader

from connectors.postgres_cdc._records import make_record
from connectors.postgres_cdc.catalog import Catalog
from connectors.postgres_cdc.config import PostgresCdcConfig, TableFilter
from connectors.postgres_cdc.events import VERSION, ColumnSpec, TableSchema
from hub.api import SourceRecord

log = logging.getLogger(__name__)

SchemaFactory = Callable[[str, str, list[ColumnSpec], Catalog], TableSchema]


class SnapshotReader:
    """Iterates (table schema, text values) over all included tables, chunk by chunk."""

    def __init__(
        self,
        config: PostgresCdcConfig,
        snapshot_name: str,
        table_filter: TableFilter,
        make_schema: SchemaFactory,
        ident: str,
    ) -> None:
        self.ident = ident
        self.conn: psycopg.Connection[Any] = psycopg.connect(config.conninfo())
        self.conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        self.conn.read_only = True
        self.conn.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(snapshot_name)))
        self._catalog = Catalog(self.conn)
        self._fetch = config.snapshot_fetch_size
        rows = self.conn.execute(
            "SELECT schemaname, tablename, format('%%I.%%I', schemaname, tablename)::regclass::oid "
            "FROM pg_publication_tables WHERE pubname = %s ORDER BY 1, 2",
            (config.publication_name,),
        ).fetchall()
        self.tables = [(s, t, oid) for s, t, oid in rows if table_filter(s, t)]
        self._make_schema = make_schema
        self.rows_read = 0

    def rows(self) -> Generator[tuple[TableSchema, list[str | None]], None, None]:
        for namespace, table, oid in self.tables:
            columns = self._catalog.columns(oid)
            schema = self._make_schema(namespace, table, columns, self._catalog)
            select = sql.SQL("SELECT {} FROM {}").format(
                sql.SQL(", ").join(sql.Identifier(c.name) for c in columns),
                sql.Identifier(namespace, table),
            )
            count = 0
            with self.conn.cursor(name=f"sluice_snapshot_{oid}") as cur:
                for type_oid in {c.type_oid for c in columns}:
                    # the output function's text, exactly what pgoutput sends
                    cur.adapters.register_loader(type_oid, TextLoader)
                cur.execute(select)
                while chunk := cur.fetchmany(self._fetch):
                    for row in chunk:
                        yield schema, list(row)
                    count += len(chunk)
            self.rows_read += count
            log.info("[%s] snapshot of %s.%s: %d rows", self.ident, namespace, table, count)

    def close(self) -> None:
        try:
            self.conn.rollback()
            self.conn.close()
        except psycopg.Error:
            log.debug("[%s] error closing the snapshot connection", self.ident)


class SnapshotEmitter:
    """Snapshot rows -> op ``r`` records, batch by batch, marking the first and last record.

    One row is held back so the very last record can say ``snapshot: last`` and carry
    ``snapshot_completed`` in its offset: once that offset is committed, a restart streams
    instead of snapshotting again.
    """

    def __init__(
        self,
        reader: SnapshotReader,
        partition: dict[str, Any],
        point: int,
        config: PostgresCdcConfig,
    ) -> None:
        self._reader = reader
        self._rows = reader.rows()
        self._partition, self._point = partition, point
        self._prefix, self._db = config.topic_prefix, config.dbname
        self._pending: tuple[TableSchema, list[str | None]] | None = None
        self._count = 0
        self.done = False

    def next_batch(self, limit: int) -> list[SourceRecord]:
        out: list[SourceRecord] = []
        while len(out) < limit:
            item = next(self._rows, None)
            if item is None:
                if self._pending is not None:
                    out.append(self._record(*self._pending, last=True))
                self.done = True
                break
            if self._pending is not None:
                out.append(self._record(*self._pending, last=False))
            self._pending = item
        return out

    def _record(self, schema: TableSchema, values: list[str | None], last: bool) -> SourceRecord:
        self._count += 1
        row = schema.row(values)
        now_us = time.time_ns() // 1000
        marker = "last" if last else "first" if self._count == 1 else "true"
        source = {
            "version": VERSION, "connector": "postgresql", "name": self._prefix,
            "ts_ms": now_us // 1000, "snapshot": marker, "db": self._db, "sequence": None,
            "ts_us": now_us, "ts_ns": now_us * 1000, "schema": schema.namespace,
            "table": schema.table, "txId": None, "lsn": self._point, "xmin": None,
        }  # fmt: skip
        offset = {
            "lsn_commit": self._point, "event_serial_no": 0, "lsn": self._point,
            "snapshot": True, "snapshot_completed": last,
        }  # fmt: skip
        return make_record(
            schema.topic, schema.key(row), schema.key_schema,
            schema.envelope("r", None, row, source, now_us), schema.value_schema,
            self._partition, offset,
        )  # fmt: skip

    def close(self) -> None:
        self._rows.close()
        self._reader.close()
