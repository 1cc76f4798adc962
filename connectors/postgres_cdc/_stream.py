"""Turns decoded pgoutput messages into Debezium change records, in commit order.

Positions: each record's source offset is ``{lsn_commit, event_serial_no, lsn, txId,
ts_usec}``: the commit LSN of its transaction (pgoutput delivers transactions in commit-LSN
order) and the record's ordinal within that transaction. The pair orders every record the
connector ever emits, so after a restart or reconnect the decoder skips exactly what was
already emitted: transactions committed before ``lsn_commit``, and the first
``event_serial_no`` records of the transaction at ``lsn_commit`` (the server resends a
transaction whole when the slot was confirmed only up to its commit). Change LSNs alone would
not do: a multi-row insert gives many rows one LSN.

Transactions are not buffered: each change becomes records as it arrives, so a transaction
of a million rows streams through in ``max.batch.size`` slices.

With ``provide.transaction.metadata`` the BEGIN and END events (``transactions``) are records
of the transaction too: BEGIN takes serial 1, END the last serial, so the resume filter above
covers them like any change.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connectors.postgres_cdc import pgoutput as pg
from connectors.postgres_cdc._records import make_record
from connectors.postgres_cdc.events import VERSION, ColumnSpec, TableSchema
from connectors.postgres_cdc.replication import pg_time_to_unix_us
from connectors.postgres_cdc.transactions import TX_KEY_SCHEMA, TX_VALUE_SCHEMA, TransactionMonitor
from hub.api import SourceRecord

log = logging.getLogger(__name__)

_RELID = struct.Struct(">I")
RelationSchema = Callable[[pg.Relation], TableSchema | None]


@dataclass(frozen=True, slots=True)
class Position:
    """Everything at or before (commit, serial) was emitted; see the module docstring."""

    commit: int
    serial: int

    @classmethod
    def from_offset(cls, offset: dict[str, Any] | None) -> Position:
        if not offset:
            return cls(0, 0)
        return cls(int(offset.get("lsn_commit", 0)), int(offset.get("event_serial_no", 0)))


class ChangeDecoder:
    """Stateful: relations seen, the open transaction, the resume filter. One thread."""

    def __init__(
        self,
        *,
        prefix: str,
        dbname: str,
        partition: dict[str, Any],
        relation_schema: RelationSchema,
        tombstones: bool,
        skipped: frozenset[str],
        resume: Position,
        transaction_topic: str | None = None,
    ) -> None:
        """``transaction_topic``: where BEGIN/END events go; None without transaction
        metadata (``provide.transaction.metadata=false``)."""
        self.prefix, self.dbname, self.partition = prefix, dbname, partition
        self._tx_topic = transaction_topic
        self._txmon = TransactionMonitor() if transaction_topic else None
        self._relation_schema = relation_schema
        self._tombstones, self._skipped = tombstones, skipped
        self.resume = resume
        self.relations: dict[int, TableSchema | None] = {}
        self.in_tx = False
        self.last_commit_end = 0
        self.last_commit_ms = 0  # commit time of the last transaction read (metrics)
        self._tx: pg.Begin | None = None
        self._serial = 0
        self._last_commit_lsn = 0
        self._tx_source: dict[str, Any] = {}
        self._table_sources: dict[TableSchema, dict[str, Any]] = {}  # of the open transaction
        self._skip_upto = 0  # records of the open transaction already emitted before a restart

    def reset(self, resume: Position) -> None:
        """After a reconnect: the server resends from the slot, relations first."""
        self.resume, self.in_tx, self._tx = resume, False, None
        self.relations.clear()

    def handle(self, lsn: int, payload: bytes, out: list[SourceRecord]) -> None:
        kind = payload[0]
        # The hot paths, without a message object: inserts, and updates that carry no old
        # tuple (no key change under REPLICA IDENTITY DEFAULT), i.e. a new tuple at byte 6.
        if (kind == 73 or (kind == 85 and payload[5] == 78)) and self._tx is not None:
            schema = self.relations.get(_RELID.unpack_from(payload, 1)[0])
            op = "c" if kind == 73 else "u"
            if schema is not None and op not in self._skipped:
                row = pg.read_row(payload, 6, schema.column_names, schema.row_converters)
                if row is None:  # TOASTed or not matching the relation: the general path
                    row = schema.row(pg.read_tuple(payload, 6)[0])
                self._emit(schema, op, None, row, None, lsn, out)
            return
        msg = pg.decode(payload)
        if isinstance(msg, pg.Insert | pg.Update | pg.Delete):
            schema = self.relations.get(msg.relid)
            if schema is not None and self._tx is not None:
                self._change(msg, schema, lsn, out)
        elif isinstance(msg, pg.Begin):
            self._begin(msg)
            if self._txmon is not None:
                key, value = self._txmon.begin(msg.xid, lsn, self._tx_source["ts_ms"])
                self._boundary(key, value, lsn, out)
        elif isinstance(msg, pg.Commit):
            if self._txmon is not None and self._tx is not None:
                key, value = self._txmon.end(lsn, pg_time_to_unix_us(msg.commit_ts) // 1000)
                self._boundary(key, value, lsn, out)
            self.in_tx, self._tx = False, None
            self._last_commit_lsn = msg.commit_lsn
            self.last_commit_end = max(self.last_commit_end, msg.end_lsn)
            self.last_commit_ms = pg_time_to_unix_us(msg.commit_ts) // 1000
        elif isinstance(msg, pg.Relation):
            self.relations[msg.oid] = self._relation_schema(msg)
        elif isinstance(msg, pg.Truncate) and self._tx is not None:
            for relid in msg.relids:
                schema = self.relations.get(relid)
                if schema is not None and "t" not in self._skipped:
                    self._emit(schema, "t", None, None, None, lsn, out)

    def _begin(self, msg: pg.Begin) -> None:
        self.in_tx, self._tx, self._serial = True, msg, 0
        if msg.final_lsn < self.resume.commit:
            self._skip_upto = 1 << 62  # the whole transaction
        elif msg.final_lsn == self.resume.commit:
            self._skip_upto = self.resume.serial
        else:
            self._skip_upto = 0
        us = pg_time_to_unix_us(msg.commit_ts)
        self._table_sources.clear()
        self._tx_source = {
            "version": VERSION, "connector": "postgresql", "name": self.prefix,
            "ts_ms": us // 1000, "snapshot": "false", "db": self.dbname, "sequence": None,
            "ts_us": us, "ts_ns": us * 1000, "schema": "", "table": "", "txId": msg.xid,
            "lsn": None, "xmin": None,
        }  # fmt: skip

    def _change(
        self,
        msg: pg.Insert | pg.Update | pg.Delete,
        schema: TableSchema,
        lsn: int,
        out: list[SourceRecord],
    ) -> None:
        if isinstance(msg, pg.Insert):
            if "c" not in self._skipped:
                self._emit(schema, "c", None, schema.row(msg.new), None, lsn, out)
            return
        if isinstance(msg, pg.Delete):
            if "d" not in self._skipped:
                old = schema.row(msg.old)
                key = schema.key(old)
                self._emit(schema, "d", old, None, key, lsn, out)
                if self._tombstones:
                    self._emit(schema, None, None, None, key, lsn, out)
            return
        after = schema.row(msg.new)
        before = schema.row(msg.old) if msg.old is not None else None
        keyed = msg.old_is_key or schema.custom_key
        if before is not None and keyed and schema.key(before) != schema.key(after):
            # The key changed (the primary key, or the message.key.columns, whose old values
            # REPLICA IDENTITY FULL sends): Debezium's delete (+ tombstone) of the old key,
            # then a create of the new one, so compacted topics keep only the new key.
            old_key = schema.key(before)
            self._emit(schema, "d", before, None, old_key, lsn, out)
            if self._tombstones:
                self._emit(schema, None, None, None, old_key, lsn, out)
            self._emit(schema, "c", None, after, None, lsn, out)
        elif "u" not in self._skipped:
            self._emit(schema, "u", None if msg.old_is_key else before, after, None, lsn, out)

    def _boundary(
        self, key: dict[str, Any], value: dict[str, Any], lsn: int, out: list[SourceRecord]
    ) -> None:
        """A BEGIN or END event, numbered and filtered like the transaction's changes."""
        tx = self._tx
        assert tx is not None and self._tx_topic is not None
        self._serial = serial = self._serial + 1
        if serial <= self._skip_upto:
            return
        offset = {
            "lsn_commit": tx.final_lsn, "event_serial_no": serial, "lsn": lsn,
            "txId": tx.xid, "ts_usec": self._tx_source["ts_us"],
        }  # fmt: skip
        out.append(make_record(self._tx_topic, key, TX_KEY_SCHEMA, value, TX_VALUE_SCHEMA,
                               self.partition, offset))  # fmt: skip

    def _emit(
        self,
        schema: TableSchema,
        op: str | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        key: dict[str, Any] | None,
        lsn: int,
        out: list[SourceRecord],
    ) -> None:
        tx = self._tx
        assert tx is not None
        self._serial = serial = self._serial + 1
        block = None
        if self._txmon is not None and op is not None:  # counted even when skipped below
            block = self._txmon.event(f"{schema.namespace}.{schema.table}", lsn)
        if serial <= self._skip_upto:
            return  # emitted before a restart or reconnect
        offset = {
            "lsn_commit": tx.final_lsn, "event_serial_no": serial, "lsn": lsn,
            "txId": tx.xid, "ts_usec": self._tx_source["ts_us"],
        }  # fmt: skip
        if op is None:  # tombstone
            out.append(make_record(schema.topic, key, schema.key_schema, None, None,
                                   self.partition, offset))  # fmt: skip
            return
        # the transaction's source block for this table, copied (a flat dict copy is cheaper
        # than a merge), then the two per-change fields; key order stays the schema's
        base = self._table_sources.get(schema)
        if base is None:
            base = self._table_sources[schema] = {
                **self._tx_source, "schema": schema.namespace, "table": schema.table
            }  # fmt: skip
        source = base.copy()
        source["sequence"] = f'["{self._last_commit_lsn}","{lsn}"]'
        source["lsn"] = lsn
        if op == "t":
            record_key, key_schema = None, None
        else:
            record_key = key if key is not None else schema.key(after or before or {})
            key_schema = schema.key_schema
        now_us = time.time_ns() // 1000
        envelope = schema.envelope(op, before, after, source, now_us)
        if block is not None:
            envelope["transaction"] = block
        out.append(make_record(
            schema.topic, record_key, key_schema, envelope, schema.value_schema,
            self.partition, offset,
        ))  # fmt: skip


def relation_columns(rel: pg.Relation, keys: set[str], not_null: set[str]) -> list[ColumnSpec]:
    """Relation message columns with the catalog's key and NOT NULL flags."""
    return [
        ColumnSpec(c.name, c.type_oid, c.typmod, c.name in not_null, c.name in keys)
        for c in rel.columns
    ]
