"""Whole puts as runs (``RowRun``: a put's value dicts kept as one list, no object per record)
against the record-by-record path: the same records must leave the same table.

Each test drives two tasks on the same database: one gets the records in puts of several
(runs, after the first put of each schema, which teaches the builder the plan), the other one
record per put (``build_run`` needs at least two records, so never a run). ``SELECT *`` of the
two tables must be equal, on PostgreSQL (binary and text COPY), DuckDB and SQLite.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from connectors.warehouse.rows import RowRun
from connectors.warehouse.sink_task import WarehouseSinkTask
from hub.api import Schema, SinkRecord, TopicPartition
from hub.api.schema import (
    INT64_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_FLOAT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    struct,
)
from tests.connectors.warehouse.helpers import Target, rec

FIELDS: tuple[tuple[str, Schema], ...] = (
    ("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA), ("amount", OPTIONAL_FLOAT64_SCHEMA),
    ("ok", OPTIONAL_BOOLEAN_SCHEMA), ("small", OPTIONAL_INT32_SCHEMA),
    ("big", OPTIONAL_INT64_SCHEMA),
)  # fmt: skip
V1 = struct(*FIELDS, name="runs.Value")
V2 = struct(*FIELDS, ("extra", OPTIONAL_STRING_SCHEMA), name="runs.Value")  # evolved
TEXTS = ["plain", "ünïcode ✓", "🦆 duck", "", "tab\there", "new\nline", "back\\slash", "\\N", None]
FLOATS = [0.5, -0.0, float("nan"), float("inf"), float("-inf"), 1e300, -2.5e-300, None, 3]
BIGS = [2**63 - 1, -(2**63), 0, -1, None, 12345678901234, 7, -7, 2**53 + 1]


def value(i: int, evolved: bool = False) -> dict[str, Any]:
    v: dict[str, Any] = {
        "id": i, "name": TEXTS[i % len(TEXTS)], "amount": FLOATS[i % len(FLOATS)],
        "ok": (True, False, None)[i % 3], "small": (2**31 - 1, -(2**31), None, i)[i % 4],
        "big": BIGS[i % len(BIGS)],
    }  # fmt: skip
    if evolved:
        v["extra"] = None if i % 2 else f"x{i}"
    return v


def key(i: int) -> dict[str, Any]:
    """With pk.mode=record_key and no pk.fields, both are key columns; ``kid`` is not a value
    field, so it becomes a column after the value's."""
    return {"id": i, "kid": -i}


def records() -> list[SinkRecord]:
    """Puts of 6: schema V1, one value missing a field, then the evolved schema V2."""
    out = [rec(i, value(i), key(i), schema=V1) for i in range(60)]
    short = value(60)
    del short["name"]  # missing field: not a run (size differs); written as NULL
    out.append(rec(60, short, key(60), schema=V1))
    out += [rec(i, value(i), key(i), schema=V1) for i in range(61, 72)]
    out += [rec(i, value(i, evolved=True), key(i), schema=V2) for i in range(72, 120)]
    return out


def comparable(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """NaN compares unequal to itself: spelled out so tables can be compared."""
    return [tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row)
            for row in rows]  # fmt: skip


def drive(task: WarehouseSinkTask, recs: list[SinkRecord], per_put: int) -> int:
    """Puts ``recs`` ``per_put`` at a time, committing every third put (so transactions hold
    runs only, runs and single changes, or two shapes where the schema evolves); returns how
    many runs were pending at once."""
    runs = 0
    for n, i in enumerate(range(0, len(recs), per_put)):
        task.put(recs[i : i + per_put])
        runs = max(runs, [type(c) for c in task._pending].count(RowRun))
        if n % 3 == 2:
            task.flush({})
    tp = TopicPartition("orders", 0)
    assert task.pre_commit({tp: len(recs)}) == {tp: len(recs)}
    return runs


@pytest.mark.parametrize("pk", ["none", "record_value", "record_key", "kafka"])
def test_runs_write_the_same_table_as_record_by_record(target: Target, pk: str) -> None:
    config = {"auto.create": "true", "auto.evolve": "true", "batch.size": "100000",
              "pk.mode": pk, "pk.fields": "id" if pk == "record_value" else ""}  # fmt: skip
    recs = records()
    bulk = target.task(**config, **{"table.name.format": "bulk_${topic}"})
    single = target.task(**config, **{"table.name.format": "single_${topic}"})
    assert drive(bulk, recs, 6) >= 2  # puts of one schema were pending as runs
    assert drive(single, recs, 1) == 0
    select = "SELECT * FROM {} ORDER BY id"
    got = comparable(target.rows(bulk, select.format("bulk_orders")))
    want = comparable(target.rows(single, select.format("single_orders")))
    assert len(got) == len(recs)
    assert got == want
    assert bulk.rows_written == single.rows_written == len(recs)


@pytest.mark.parametrize("pk", ["record_value", "record_key"])
def test_upsert_of_runs_collapses_keys_like_record_by_record(target: Target, pk: str) -> None:
    config = {"auto.create": "true", "insert.mode": "upsert", "pk.mode": pk,
              "pk.fields": "id", "batch.size": "100000"}  # fmt: skip
    # ids repeating within a transaction (the last write of each id wins), then new ids and
    # updates of them, each id once per transaction (written as the runs' rows).
    ids = [i % 9 for i in range(48)] + [100 + i for i in range(48)] * 2
    recs = [rec(n, {**value(n), "id": i}, {"id": i}, schema=V1) for n, i in enumerate(ids)]
    bulk = target.task(**config, **{"table.name.format": "bulk_${topic}"})
    single = target.task(**config, **{"table.name.format": "single_${topic}"})
    assert drive(bulk, recs, 8) >= 2
    drive(single, recs, 1)
    got = comparable(target.rows(bulk, "SELECT * FROM bulk_orders ORDER BY id"))
    assert got == comparable(target.rows(single, "SELECT * FROM single_orders ORDER BY id"))
    last = sorted(range(39, 48), key=lambda n: n % 9)  # the last write of ids 0..8
    assert [r[4] for r in got[:9]] == [value(n)["small"] for n in last]
    assert [r[4] for r in got[9:]] == [value(n)["small"] for n in range(96, 144)]


def test_a_bad_record_inside_a_run_is_isolated(target: Target) -> None:
    if target.kind == "sqlite":
        pytest.skip("SQLite stores any value in any column (type affinity)")
    task = target.task(tolerate=True, **{"auto.create": "true", "batch.size": "100000"})
    good = [rec(i, value(i), schema=V1) for i in range(12)]
    bad = rec(12, {**value(12), "big": "not a number"}, schema=V1)
    more = [rec(i, value(i), schema=V1) for i in range(13, 18)]
    task.put(good[:6])
    task.put(good[6:])
    task.put([*more[:2], bad, *more[2:]])  # a run: its values are not checked when built
    assert [type(c) for c in task._pending].count(RowRun) == 2
    tp = TopicPartition("orders", 0)
    assert task.pre_commit({tp: 18}) == {tp: 18}
    [(reported, _)] = task.context.reporter.reported  # type: ignore[attr-defined]
    assert reported.offset == 12
    ids = [r[0] for r in target.rows(task, "SELECT id FROM orders ORDER BY id")]
    assert ids == [i for i in range(18) if i != 12]


def test_closing_a_partition_drops_its_rows_from_pending_runs(target: Target) -> None:
    task = target.task(**{"auto.create": "true", "batch.size": "100000"})
    recs = [rec(i, value(i), schema=V1, partition=i % 2) for i in range(16)]
    task.put(recs[:8])
    task.put(recs[8:])  # a run holding records of both partitions
    assert [type(c) for c in task._pending].count(RowRun) == 1
    task.close([TopicPartition("orders", 0)])
    assert task._pending_rows == 8
    tp1 = TopicPartition("orders", 1)
    assert task.pre_commit({tp1: 16}) == {tp1: 16}
    ids = [r[0] for r in target.rows(task, "SELECT id FROM orders ORDER BY id")]
    assert ids == [i for i in range(16) if i % 2]
