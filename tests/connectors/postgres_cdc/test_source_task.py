"""The task driven directly (``TaskHarness``: an in-test SourceTaskContext with an offset
reader, no worker) against a real PostgreSQL: snapshot, streaming, order, restarts."""

from __future__ import annotations

import threading
from typing import Any

import psycopg


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


def test_snapshot_with_concurrent_writes_has_no_gap_or_duplicate(
    harness, sql, postgres, pg_database
) -> None:
    """Writers run while the slot is created and the snapshot read: every row id shows up
    exactly once as 'r' or 'c', and replaying all events gives the table's final state."""
    sql("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)",
        "INSERT INTO t SELECT g, 0 FROM generate_series(1, 20000) g")  # fmt: skip
    stop = threading.Event()
    written = []

    def writer() -> None:
        with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
            n = 20000
            while not stop.is_set():
                n += 1
                conn.execute("INSERT INTO t VALUES (%s, 1)", (n,))
                conn.execute("UPDATE t SET v = v + 1 WHERE id = %s", (n % 20000 + 1,))
                written.append(n)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        h = harness(**{"snapshot.fetch.size": "1000"})
        h.poll_until(lambda rs: any(r.value and r.value["op"] == "c" for r in rs), what="stream")
    finally:
        stop.set()
        thread.join()
    with psycopg.connect(postgres.dsn(pg_database)) as conn:
        expected = dict(conn.execute("SELECT id, v FROM t").fetchall())

    def replayed() -> dict[int, int]:
        return {r.value["after"]["id"]: r.value["after"]["v"] for r in h.changes()}

    h.poll_until(lambda _: replayed() == expected, what="the table's final state")
    created = [r.value["after"]["id"] for r in h.changes() if r.value["op"] in ("r", "c")]
    assert len(created) == len(set(created)) == 20000 + len(written)


def test_multi_table_transactions_arrive_in_commit_order(
    harness, sql, postgres, pg_database
) -> None:
    sql("CREATE TABLE a (id int PRIMARY KEY, v text)", "CREATE TABLE b (id int PRIMARY KEY)")
    h = harness()
    with psycopg.connect(postgres.dsn(pg_database)) as c1, \
            psycopg.connect(postgres.dsn(pg_database)) as c2:  # fmt: skip
        c1.execute("INSERT INTO a VALUES (1, 'first-begun')")  # tx 1 begins first ...
        c2.execute("INSERT INTO b VALUES (1)")
        c2.execute("INSERT INTO a VALUES (2, 'x')")
        c2.commit()  # ... but tx 2 commits first
        c1.execute("INSERT INTO b VALUES (2)")
        c1.execute("UPDATE a SET v = 'y' WHERE id = 2")
        c1.execute("DELETE FROM b WHERE id = 1")
        c1.commit()
    sql("BEGIN; INSERT INTO a VALUES (3, 'z'); TRUNCATE b; COMMIT")
    h.wait_changes(8)
    got = [(r.topic.rsplit(".", 1)[1], r.value["op"]) for r in h.changes()]
    assert got == [("b", "c"), ("a", "c"), ("a", "c"), ("b", "c"), ("a", "u"), ("b", "d"),
                   ("a", "c"), ("b", "t")]  # fmt: skip
    tx = [r.value["source"]["txId"] for r in h.changes()]
    assert tx[0] == tx[1] and tx[2] == tx[3] == tx[4] == tx[5] and tx[6] == tx[7]
    assert len({tx[0], tx[2], tx[6]}) == 3
    offsets = [(r.source_offset["lsn_commit"], r.source_offset["event_serial_no"])
               for r in h.records]  # fmt: skip
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    trunc = h.changes()[-1]
    assert trunc.key is None and trunc.value["before"] is None and trunc.value["after"] is None


def test_restart_resumes_after_the_last_acknowledged_record(harness, sql) -> None:
    """Ack part of a transaction, stop, start a new task on the same offsets: the rest of
    that transaction and everything after arrive once; nothing acknowledged comes again."""
    sql("CREATE TABLE t (id int PRIMARY KEY)")
    h = harness(**{"max.batch.size": "100"})
    h.poll_until(lambda _: h.task._repl is not None and h.task._repl.streaming, what="streaming")
    sql("INSERT INTO t SELECT generate_series(1, 1000)", "INSERT INTO t VALUES (1001)")
    h.wait_changes(300)
    h.ack(250)
    h.ack(250)  # the slot is confirmed one commit behind the stored offset
    h.stop()
    sql("INSERT INTO t VALUES (1002)")
    h2 = harness(store=h.store)
    h2.wait_changes(752)
    assert ids(h.changes()[:250]) + ids(h2.changes()) == list(range(1, 1003))
