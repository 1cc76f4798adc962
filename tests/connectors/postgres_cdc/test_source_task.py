"""The task driven directly (``TaskHarness``: an in-test SourceTaskContext with an offset
reader, no worker) against a real PostgreSQL: snapshot, streaming, order, restarts."""

from __future__ import annotations

from typing import Any


def ids(records: list[Any]) -> list[int]:
    return [(r.value["after"] or r.value["before"])["id"] for r in records]


def test_snapshot_then_stream(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY, name text)",
        "INSERT INTO t SELECT g, 'n' || g FROM generate_series(1, 5) g")  # fmt: skip
    h = harness()
    snap = h.wait_changes(5)
    assert [r.value["op"] for r in snap] == ["r"] * 5
    markers = [r.value["source"]["snapshot"] for r in snap]
    assert markers == ["first", "true", "true", "true", "last"]
    assert snap[-1].source_offset["snapshot_completed"] is True
    assert snap[0].key == {"id": 1} and snap[0].value["after"] == {"id": 1, "name": "n1"}
    assert snap[0].topic == f"{h.config['topic.prefix']}.public.t"
    sql("INSERT INTO t VALUES (6, 'six')", "UPDATE t SET name = 'x' WHERE id = 1",
        "DELETE FROM t WHERE id = 2")  # fmt: skip
    h.poll_until(lambda rs: len(rs) >= 9, what="c, u, d + tombstone")
    c, u, d, tomb = h.records[5:9]
    assert (c.value["op"], c.value["after"]) == ("c", {"id": 6, "name": "six"})
    assert (u.value["op"], u.value["before"]) == ("u", None)
    assert u.value["after"] == {"id": 1, "name": "x"}
    assert (d.value["op"], d.value["before"]) == ("d", {"id": 2, "name": None})
    assert (tomb.key, tomb.value) == ({"id": 2}, None)
    src = c.value["source"]
    assert src["connector"] == "postgresql" and src["table"] == "t" and src["txId"] > 0
    assert src["lsn"] > 0 and src["snapshot"] == "false"
