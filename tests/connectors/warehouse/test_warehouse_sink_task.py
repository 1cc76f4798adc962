"""WarehouseSinkTask driven directly on PostgreSQL, DuckDB and SQLite (unit tests of the
connector logic with a small in-test SinkTaskContext; the runtime is not involved)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pytest

from hub.api import ConnectError, DataError, Schema, TopicPartition, Type
from hub.api.schema import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, struct
from tests.connectors.warehouse.helpers import Target, rec

VALUE = struct(("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA), name="orders.Value")
KEY = struct(("id", INT64_SCHEMA), name="orders.Key")


def order(offset: int, id: int, name: str | None, **kw):  # type: ignore[no-untyped-def]
    return rec(offset, {"id": id, "name": name}, {"id": id}, schema=VALUE, key_schema=KEY, **kw)


def test_insert_auto_create_and_batch_boundaries(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "batch.size": "2"})
    task.put([order(i, i, f"n{i}") for i in range(5)])  # 5 rows through 2-row statements
    task.put([order(5, 5, None)])
    assert target.rows(task, "SELECT id, name FROM orders ORDER BY id") == [
        *[(i, f"n{i}") for i in range(5)], (5, None)]  # fmt: skip
    tp = TopicPartition("orders", 0)
    assert task.pre_commit({tp: 6}) == {tp: 6}
    assert task.transactions <= 2  # whole put batches per transaction


def test_insert_without_key_appends_duplicates(target: Target) -> None:
    task = target.task(**{"auto.create": "true"})
    task.put([order(0, 1, "a"), order(1, 1, "a")])
    assert target.rows(task, "SELECT count(*) FROM orders") == [(2,)]


def test_upsert_by_record_key_last_change_wins(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "insert.mode": "upsert",
                          "pk.mode": "record_key"})  # fmt: skip
    task.put([order(0, 1, "a"), order(1, 2, "b"), order(2, 1, "a2")])  # key 1 twice in a batch
    task.put([order(3, 2, "b2"), order(4, 3, "c")])
    assert target.rows(task, "SELECT id, name FROM orders ORDER BY id") == [
        (1, "a2"), (2, "b2"), (3, "c")]  # fmt: skip


def test_upsert_kafka_coordinates_make_redelivery_idempotent(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "insert.mode": "upsert", "pk.mode": "kafka"})
    batch = [order(i, i, f"n{i}", partition=i % 2) for i in range(6)]
    task.put(batch)
    task.put(batch)  # as after a crash before the offset commit
    rows = target.rows(task, "SELECT __connect_topic, __connect_partition, __connect_offset, id "
                             "FROM orders ORDER BY __connect_offset")  # fmt: skip
    assert rows == [("orders", i % 2, i, i) for i in range(6)]


def test_primitive_key_needs_one_pk_field(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "insert.mode": "upsert",
                          "pk.mode": "record_key", "pk.fields": "order_id"})  # fmt: skip
    schema = struct(("name", STRING_SCHEMA))
    task.put([rec(0, {"name": "a"}, 7, schema=schema, key_schema=INT64_SCHEMA),
              rec(1, {"name": "b"}, 7, schema=schema, key_schema=INT64_SCHEMA)])  # fmt: skip
    assert target.rows(task, "SELECT order_id, name FROM orders") == [(7, "b")]


def test_record_value_pk_fields(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "insert.mode": "upsert",
                          "pk.mode": "record_value", "pk.fields": "id"})  # fmt: skip
    task.put([rec(0, {"id": 1, "name": "a"}, schema=VALUE), rec(1, {"id": 1, "name": "z"},
              schema=VALUE)])  # fmt: skip
    assert target.rows(task, "SELECT id, name FROM orders") == [(1, "z")]


def test_update_mode_touches_only_existing_rows(target: Target) -> None:
    seed = target.task(**{"auto.create": "true", "insert.mode": "upsert", "pk.mode": "record_key"})
    seed.put([order(0, 1, "a"), order(1, 2, "b")])
    seed.flush({})
    task = target.task(**{"insert.mode": "update", "pk.mode": "record_key"})
    task.put([order(2, 2, "b2"), order(3, 9, "nobody")])
    assert target.rows(task, "SELECT id, name FROM orders ORDER BY id") == [(1, "a"), (2, "b2")]


def test_tombstones_delete_when_enabled_and_are_skipped_otherwise(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "insert.mode": "upsert",
                          "pk.mode": "record_key", "delete.enabled": "true"})  # fmt: skip
    task.put([order(i, i, f"n{i}") for i in range(4)])
    # a delete then a re-insert of key 3 in one batch: the last change wins
    task.put([rec(4, None, {"id": 1}, key_schema=KEY), rec(5, None, {"id": 3}, key_schema=KEY),
              order(6, 3, "again")])  # fmt: skip
    assert target.rows(task, "SELECT id, name FROM orders ORDER BY id") == [
        (0, "n0"), (2, "n2"), (3, "again")]  # fmt: skip
    keep = target.task(**{"insert.mode": "upsert", "pk.mode": "record_key"})
    keep.put([rec(7, None, {"id": 0}, key_schema=KEY)])
    assert keep.builder.skipped == 1
    assert target.rows(keep, "SELECT count(*) FROM orders") == [(3,)]


def test_auto_evolve_adds_nullable_columns(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "auto.evolve": "true"})
    task.put([order(0, 1, "a")])
    wider = struct(("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA),
                   ("qty", Schema(Type.INT32)), name="orders.Value2")  # fmt: skip
    task.put([rec(1, {"id": 2, "name": "b", "qty": 5}, schema=wider)])
    assert target.rows(task, "SELECT id, qty FROM orders ORDER BY id") == [(1, None), (2, 5)]


def test_missing_column_without_auto_evolve_is_a_record_error(target: Target) -> None:
    seed = target.task(**{"auto.create": "true"})
    seed.put([order(0, 1, "a")])
    seed.flush({})
    task = target.task(tolerate=True)
    task.put([rec(1, {"id": 2, "extra": "x"}), order(2, 3, "c")])
    [(bad, error)] = task.context.reporter.reported  # type: ignore[attr-defined]
    assert bad.offset == 1 and "auto.evolve" in str(error)
    assert target.rows(task, "SELECT id FROM orders ORDER BY id") == [(1,), (3,)]


def test_missing_table_without_auto_create_fails_the_task(target: Target) -> None:
    task = target.task()
    with pytest.raises(ConnectError, match=r"auto\.create"):
        task.put([order(0, 1, "a")])


def test_fields_whitelist_and_table_name_format(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "fields.whitelist": "name",
                          "pk.mode": "record_key",
                          "table.name.format": "kafka_${topic}"})  # fmt: skip
    wide = struct(("id", INT64_SCHEMA), ("name", STRING_SCHEMA), ("secret", STRING_SCHEMA))
    task.put([rec(0, {"id": 1, "name": "a", "secret": "s"}, {"id": 1}, schema=wide,
                  key_schema=KEY)])  # fmt: skip
    assert target.rows(task, "SELECT * FROM kafka_orders") == [(1, "a")]


def test_schemaless_values_are_typed_from_python(target: Target) -> None:
    task = target.task(**{"auto.create": "true"})
    when = dt.datetime(2024, 5, 1, 12, 30)
    task.put([rec(0, {"id": 1, "price": 2.5, "ok": True, "amount": decimal.Decimal("1.25"),
                      "at": when, "day": when.date(), "tags": ["a"], "note": None})])  # fmt: skip
    [row] = target.rows(task, 'SELECT id, price, ok, amount, "at", day, tags FROM orders')
    assert row[:3] == (1, 2.5, True) and decimal.Decimal(str(row[3])) == decimal.Decimal("1.25")
    assert str(row[4]).startswith("2024-05-01") and str(row[5]) == "2024-05-01"
    assert row[6] == '["a"]'


def test_connect_logical_types(target: Target) -> None:
    from hub.converters.logical import TIMESTAMP_SCHEMA, decimal_schema

    schema = struct(("id", INT64_SCHEMA), ("at", TIMESTAMP_SCHEMA), ("amount", decimal_schema(2)))
    task = target.task(**{"auto.create": "true"})
    when = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    task.put([rec(0, {"id": 1, "at": when, "amount": decimal.Decimal("12.34")}, schema=schema)])
    [(at, amount)] = target.rows(task, 'SELECT "at", amount FROM orders')
    assert str(at).startswith("2024-01-02 03:04:05") and decimal.Decimal(str(amount)) == \
        decimal.Decimal("12.34")  # fmt: skip


def test_bad_record_is_found_by_splitting_and_reported(target: Target) -> None:
    seed = target.task(**{"auto.create": "true", "pk.mode": "record_value", "pk.fields": "id"})
    seed.put([order(0, 1, "a")])
    seed.flush({})
    task = target.task(tolerate=True, **{"pk.mode": "record_value", "pk.fields": "id"})
    task.put([order(i, i, f"n{i}") for i in range(2, 9)] + [order(9, 1, "dup"), order(10, 10, "x")])
    task.flush({})
    [(bad, error)] = task.context.reporter.reported  # type: ignore[attr-defined]
    assert bad.offset == 9 and isinstance(error, DataError) and "orders-0@9" in str(error)
    ids = [r[0] for r in target.rows(task, "SELECT id FROM orders ORDER BY id")]
    assert ids == [1, *range(2, 9), 10]  # everything else written, nothing dropped silently


def test_bad_record_without_reporter_fails_with_its_coordinates(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "pk.mode": "record_key"})
    with pytest.raises(DataError, match=r"orders-0@1.*no key"):
        task.put([order(0, 1, "a"), rec(1, {"id": 2, "name": "b"}, schema=VALUE)])


def test_type_mismatch_is_a_record_error(target: Target) -> None:
    if target.kind == "sqlite":
        pytest.skip("SQLite stores any value in any column (type affinity)")
    task = target.task(tolerate=True, **{"auto.create": "true"})
    task.put([rec(0, {"id": 1}), rec(1, {"id": "not a number"}), rec(2, {"id": 3})])
    task.flush({})
    [(bad, _)] = task.context.reporter.reported  # type: ignore[attr-defined]
    assert bad.offset == 1
    assert target.rows(task, "SELECT id FROM orders ORDER BY id") == [(1,), (3,)]


def test_a_delete_before_the_table_exists_is_a_no_op(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "insert.mode": "upsert",
                          "pk.mode": "record_key", "delete.enabled": "true"})  # fmt: skip
    task.put([rec(0, None, {"id": 1}, key_schema=KEY), order(1, 2, "b")])
    assert target.rows(task, "SELECT id, name FROM orders") == [(2, "b")]
    assert task.builder.skipped == 1


def test_two_shapes_of_one_table_in_one_transaction(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "insert.mode": "upsert",
                          "pk.mode": "record_value", "pk.fields": "id"})  # fmt: skip
    task.put([rec(0, {"id": 1, "name": "a"}), rec(1, {"name": "b", "id": 2}),
              rec(2, {"id": 2, "name": "b2"}), rec(3, {"name": "c", "id": 3})])  # fmt: skip
    assert target.rows(task, "SELECT id, name FROM orders ORDER BY id") == [
        (1, "a"), (2, "b2"), (3, "c")]  # fmt: skip
    assert task.transactions == 1


def test_upsert_over_committed_rows_updates_them(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "insert.mode": "upsert",
                          "pk.mode": "record_key"})  # fmt: skip
    for round_ in range(3):  # new keys, then conflicts (PostgreSQL: failed COPY, then staged)
        task.put([order(10 * round_ + i, i, f"r{round_}-{i}") for i in range(5)])
        task.flush({})
    task.put([order(40, 9, "new"), order(41, 0, "last")])
    assert target.rows(task, "SELECT id, name FROM orders ORDER BY id") == [
        (0, "last"), *[(i, f"r2-{i}") for i in range(1, 5)], (9, "new")]  # fmt: skip


class HeldWriter:
    """Stands in for the task's writer thread: holds handed-over transactions until ``run``
    (then runs later ones at once), so a test sees the task while one is in flight."""

    def __init__(self) -> None:
        self.held: list[tuple[Future[None], Callable[..., None], tuple[Any, ...]]] = []
        self.holding = True

    def submit(self, fn: Callable[..., None], *args: Any) -> Future[None]:
        future: Future[None] = Future()
        self.held.append((future, fn, args))
        if not self.holding:
            self.run()
        return future

    def run(self) -> None:
        self.holding = False
        while self.held:
            future, fn, args = self.held.pop(0)
            try:
                fn(*args)
                future.set_result(None)
            except Exception as exc:
                future.set_exception(exc)

    def shutdown(self, wait: bool = True) -> None:
        self.run()


def test_offsets_of_a_transaction_in_flight_wait_for_its_commit(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "batch.size": "2"})
    writer = HeldWriter()
    task._pool = writer  # type: ignore[assignment]
    tp = TopicPartition("orders", 0)
    task.put([order(0, 0, "a"), order(1, 1, "b")])  # batch.size rows: handed over, held
    task.put([rec(2, None), rec(3, None)])  # skipped tombstones behind it
    assert task._done == {}  # nothing is confirmed before the transaction commits
    task.put([order(4, 4, "c"), order(5, 5, "d")])  # waits for the next transaction (grows it)
    assert len(writer.held) == 1
    writer.run()
    assert task.pre_commit({tp: 6}) == {tp: 6}
    assert task.transactions == 2
    assert target.rows(task, "SELECT id FROM orders ORDER BY id") == [(0,), (1,), (4,), (5,)]


def test_whole_puts_of_one_schema_take_the_batch_path(target: Target) -> None:
    task = target.task(**{"auto.create": "true"})
    task.put([order(i, i, f"n{i}") for i in range(3)])  # first sight of the schema: per record
    assert task.builder.build_run([order(3, 3, "x"), order(4, 4, "y")]) is not None
    task.put([order(i, i, f"n{i}") for i in range(3, 6)])  # the batch path
    other = struct(("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA), name="orders.Value")
    mixed = [order(6, 6, "a"), rec(7, {"id": 7, "name": "b"}, {"id": 7}, schema=other)]
    assert task.builder.build_run(mixed) is None  # another schema object: record by record
    task.put(mixed)
    assert target.rows(task, "SELECT id, name FROM orders ORDER BY id") == [
        *[(i, f"n{i}") for i in range(6)], (6, "a"), (7, "b")]  # fmt: skip
    tp = TopicPartition("orders", 0)
    assert task.pre_commit({tp: 8}) == {tp: 8}


def test_rows_formatted_by_the_task_for_copy_read_back_the_same(target: Target) -> None:
    task = target.task(**{"auto.create": "true"})
    tricky = ["tab\there", "new\nline", "back\\slash", "\\N", "", "ünïcode ✓", "cr\rlf"]
    task.put([rec(i, {"id": i, "text": s, "f": i / 3, "ok": i % 2 == 0, "n": None if i else 1})
              for i, s in enumerate(tricky)])  # fmt: skip
    task.put(
        [
            rec(len(tricky) + i, {"id": 100 + i, "text": s, "f": -0.0, "ok": False, "n": 2})
            for i, s in enumerate(tricky)
        ]
    )  # same shape: a batch of rows formatted at once
    rows = target.rows(task, "SELECT id, text, f, ok, n FROM orders ORDER BY id")
    assert rows[: len(tricky)] == [
        (i, s, i / 3, i % 2 == 0, None if i else 1) for i, s in enumerate(tricky)]  # fmt: skip
    assert [r[1] for r in rows[len(tricky) :]] == tricky


def test_a_bool_in_an_integer_column_is_still_a_bad_record(target: Target) -> None:
    if target.kind != "postgresql":
        pytest.skip("PostgreSQL's binary COPY is what could have written it as 1")
    task = target.task(tolerate=True, **{"auto.create": "true"})
    task.put([rec(0, {"id": 1, "n": 5}), rec(1, {"id": 2, "n": 6})])
    task.flush({})
    task.put([rec(2, {"id": 3, "n": True}), rec(3, {"id": 4, "n": 7})])  # not binary: text
    task.flush({})
    [(bad, _)] = task.context.reporter.reported  # type: ignore[attr-defined]
    assert bad.offset == 2
    assert target.rows(task, "SELECT id, n FROM orders ORDER BY id") == [(1, 5), (2, 6), (4, 7)]


def test_upsert_by_record_key_survives_redelivery_after_a_crash(target: Target) -> None:
    """The task dies after writing but before its offsets were committed; a new task gets
    the same records again (from the last committed offset): no duplicate rows, the sink's
    declared exactly-once delivery (``WarehouseSinkConnector.exactly_once_delivery``)."""
    from connectors.warehouse.connector import WarehouseSinkConnector
    from hub.api import ExactlyOnceSupport

    settings = {"auto.create": "true", "insert.mode": "upsert", "pk.mode": "record_key"}
    assert WarehouseSinkConnector.exactly_once_delivery(settings) is ExactlyOnceSupport.SUPPORTED
    assert WarehouseSinkConnector.exactly_once_delivery({}) is ExactlyOnceSupport.UNSUPPORTED
    first = target.task(**settings)
    first.put([order(i, i % 4, f"v{i}") for i in range(8)])  # written, never committed
    again = target.task(**settings)  # the restarted task: redelivery from offset 0
    again.put([order(i, i % 4, f"v{i}") for i in range(8)])
    again.put([order(8, 1, "after")])
    assert target.rows(again, "SELECT id, name FROM orders ORDER BY id") == [
        (0, "v4"), (1, "after"), (2, "v6"), (3, "v7")]  # fmt: skip
