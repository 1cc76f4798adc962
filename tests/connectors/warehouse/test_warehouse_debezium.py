"""Debezium change events applied directly (c/r/u -> upsert, d -> delete, t -> truncate) on
every target; direct task tests with an in-test context. The same flow from a real
``postgres_cdc`` source through ``sluice up`` is in test_warehouse_e2e.py."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import sqlalchemy as sa

from connectors.warehouse import debezium
from connectors.warehouse.sink_task import classify
from hub.api import Field, Schema, Type
from tests.connectors.warehouse.helpers import Target, rec

TOPIC = "dbserver1.inventory.customers"
KEY = Schema(Type.STRUCT, name=f"{TOPIC}.Key", fields=(Field("id", Schema(Type.INT32)),))
ROW = Schema(Type.STRUCT, optional=True, name=f"{TOPIC}.Value", fields=(
    Field("id", Schema(Type.INT32)),
    Field("email", Schema(Type.STRING, optional=True)),
    Field("born", Schema(Type.INT32, optional=True, name="io.debezium.time.Date")),
    Field("seen", Schema(Type.INT64, optional=True, name="io.debezium.time.MicroTimestamp")),
    Field("paid", Schema(Type.STRUCT, optional=True, name="io.debezium.data.VariableScaleDecimal",
                         fields=(Field("scale", Schema(Type.INT32)),
                                 Field("value", Schema(Type.BYTES))))),
))  # fmt: skip
ENVELOPE = Schema(Type.STRUCT, name=f"{TOPIC}.Envelope", fields=(
    Field("before", ROW), Field("after", ROW),
    Field("source", Schema(Type.STRUCT, fields=(Field("table", Schema(Type.STRING)),))),
    Field("op", Schema(Type.STRING)), Field("ts_ms", Schema(Type.INT64, optional=True)),
))  # fmt: skip
CONFIG = {"topics": TOPIC, "auto.create": "true", "insert.mode": "upsert",
          "pk.mode": "record_key", "delete.enabled": "true", "truncate.enabled": "true",
          "table.name.format": "customers"}  # fmt: skip


def row(id: int, email: str) -> dict[str, Any]:
    return {"id": id, "email": email, "born": 19000, "seen": 1_700_000_000_123_456,
            "paid": {"scale": 2, "value": (1234).to_bytes(2, "big", signed=True)}}  # fmt: skip


def event(offset: int, op: str, id: int | None, after: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    value = {"before": None, "after": after, "source": {"table": "customers"}, "op": op,
             "ts_ms": 0}  # fmt: skip
    key = {"id": id} if id is not None else None
    return rec(offset, value, key, topic=TOPIC, schema=ENVELOPE, key_schema=KEY if key else None)


def tombstone(offset: int, id: int):  # type: ignore[no-untyped-def]
    return rec(offset, None, {"id": id}, topic=TOPIC, key_schema=KEY)


def test_change_events_replicate_a_table(target: Target) -> None:
    task = target.task(**CONFIG)
    task.put([event(i, "r", i, row(i, f"c{i}")) for i in range(1, 6)])  # snapshot
    task.put([event(6, "c", 6, row(6, "new")), event(7, "u", 2, row(2, "changed")),
              event(8, "d", 3), tombstone(9, 3), event(10, "u", 6, row(6, "newer"))])  # fmt: skip
    rows = target.rows(task, "SELECT id, email, born, seen, paid FROM customers ORDER BY id")
    assert [(r[0], r[1]) for r in rows] == [(1, "c1"), (2, "changed"), (4, "c4"), (5, "c5"),
                                            (6, "newer")]  # fmt: skip
    born, seen, paid = rows[0][2:]
    assert str(born) == str(dt.date(1970, 1, 1) + dt.timedelta(days=19000))
    assert str(seen).startswith("2023-11-14 22:13:20.123456")
    assert decimal.Decimal(str(paid)) == decimal.Decimal("12.34")
    task.put([event(11, "t", None)])
    assert target.rows(task, "SELECT count(*) FROM customers") == [(0,)]


def test_deletes_and_truncates_are_skipped_unless_enabled(target: Target) -> None:
    task = target.task(**{**CONFIG, "delete.enabled": "false", "truncate.enabled": "false"})
    task.put([event(0, "c", 1, row(1, "a")), event(1, "d", 1), tombstone(2, 1),
              event(3, "t", None)])  # fmt: skip
    assert target.rows(task, "SELECT id FROM customers") == [(1,)]
    assert task.builder.skipped == 3


def test_detection() -> None:
    value = {"before": None, "after": {"id": 1}, "op": "c", "source": {}}
    assert debezium.is_envelope(value, None) and debezium.is_envelope(value, ENVELOPE)
    assert not debezium.is_envelope({"op": "c", "after": {}}, None)  # no 'before'
    assert not debezium.is_envelope({**value, "op": "x"}, None)
    assert not debezium.is_envelope(value, Schema(Type.STRUCT, fields=(Field("op", ROW),)))


def test_unwrap_false_writes_envelopes_as_rows(target: Target) -> None:
    task = target.task(**{"topics": "orders", "auto.create": "true", "debezium.unwrap": "false"})
    task.put([rec(0, {"before": None, "after": "x", "op": "c"})])
    assert target.rows(task, "SELECT op, after FROM orders") == [("c", "x")]


def test_classify_by_pep249_class() -> None:
    import psycopg

    assert classify(psycopg.OperationalError("server closed the connection")) == "transient"
    assert classify(psycopg.errors.UniqueViolation("dup")) == "record"
    assert classify(sa.exc.OperationalError("x", {}, psycopg.OperationalError())) == "transient"
    assert classify(RuntimeError("boom")) == "other"
