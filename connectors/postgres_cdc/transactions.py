"""``provide.transaction.metadata``: Debezium's transaction boundaries and event enrichment.

For every transaction the stream delivers, a ``BEGIN`` and an ``END`` event go to
``<topic.prefix>.<topic.transaction>`` (default ``<prefix>.transaction``), and each change
event's ``transaction`` block says which transaction it belongs to and where:

* key ``io.debezium.connector.common.TransactionMetadataKey`` {id};
* value ``io.debezium.connector.common.TransactionMetadataValue`` {status, id, event_count,
  data_collections, ts_ms}: ``event_count`` and ``data_collections`` (an array of
  ``event.collection`` {data_collection, event_count}, ``data_collection`` = ``schema.table``)
  only on ``END``; ``ts_ms`` is the commit time;
* block ``event.block`` {id, total_order, data_collection_order}: the event's position among
  all events of its transaction and among those of its table, both from 1.

As in Debezium's PostgreSQL connector the id is ``<xid>:<LSN>`` where the LSN is that of the
message at hand (the BEGIN message, the change, the COMMIT message), so it differs from event
to event of one transaction; consumers group by the xid part. Tombstones and skipped
operations are not events and are not counted. Snapshot events carry no block.

Counters restart with each transaction and are recomputed when a transaction is resent after
a restart (the decoder counts the events it skips), so ``END`` counts are exact.
"""

from __future__ import annotations

from typing import Any

from hub.api import Field, Schema, Type

TX_KEY_SCHEMA = Schema(
    Type.STRUCT,
    name="io.debezium.connector.common.TransactionMetadataKey",
    version=1,
    fields=(Field("id", Schema(Type.STRING)),),
)
TX_COLLECTION_SCHEMA = Schema(
    Type.STRUCT,
    optional=True,
    name="event.collection",
    version=1,
    fields=(
        Field("data_collection", Schema(Type.STRING)),
        Field("event_count", Schema(Type.INT64)),
    ),
)
TX_VALUE_SCHEMA = Schema(
    Type.STRUCT,
    name="io.debezium.connector.common.TransactionMetadataValue",
    version=1,
    fields=(
        Field("status", Schema(Type.STRING)),
        Field("id", Schema(Type.STRING)),
        Field("event_count", Schema(Type.INT64, optional=True)),
        Field("data_collections", Schema(Type.ARRAY, optional=True, value=TX_COLLECTION_SCHEMA)),
        Field("ts_ms", Schema(Type.INT64)),
    ),
)


class TransactionMonitor:
    """Counters of the open transaction. One thread (the task's), like the decoder."""

    def __init__(self) -> None:
        self.xid = 0
        self.total = 0
        self.per_table: dict[str, int] = {}

    def begin(self, xid: int, lsn: int, ts_ms: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """(key, value) of the BEGIN event; resets the counters."""
        self.xid, self.total = xid, 0
        self.per_table = {}
        tx_id = f"{xid}:{lsn}"
        value = {"status": "BEGIN", "id": tx_id, "event_count": None,
                 "data_collections": None, "ts_ms": ts_ms}  # fmt: skip
        return {"id": tx_id}, value

    def event(self, data_collection: str, lsn: int) -> dict[str, Any]:
        """The ``transaction`` block of the next change event of ``data_collection``."""
        self.total += 1
        order = self.per_table.get(data_collection, 0) + 1
        self.per_table[data_collection] = order
        return {"id": f"{self.xid}:{lsn}", "total_order": self.total,
                "data_collection_order": order}  # fmt: skip

    def end(self, lsn: int, ts_ms: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """(key, value) of the END event, with the transaction's counts."""
        tx_id = f"{self.xid}:{lsn}"
        collections = [{"data_collection": name, "event_count": count}
                       for name, count in self.per_table.items()]  # fmt: skip
        value = {"status": "END", "id": tx_id, "event_count": self.total,
                 "data_collections": collections, "ts_ms": ts_ms}  # fmt: skip
        return {"id": tx_id}, value
