"""Streaming behaviour with the task driven directly (``TaskHarness``: in-test context and
offset reader, no worker): schema changes, database restarts, heartbeats, snapshot modes,
large transactions."""

from __future__ import annotations

import psycopg

from connectors.postgres_cdc.replication import str_to_lsn


def streaming(h) -> None:
    h.poll_until(lambda _: h.task._repl is not None and h.task._repl.streaming, what="streaming")


def confirmed_flush(postgres, dbname: str, slot: str) -> int:
    with psycopg.connect(postgres.dsn(dbname)) as conn:
        row = conn.execute(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s",
            (slot,),
        ).fetchone()
    return str_to_lsn(row[0])


def test_add_and_drop_column_and_new_table_mid_stream(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY, a text)")
    h = harness()
    streaming(h)
    sql("INSERT INTO t VALUES (1, 'x')", "ALTER TABLE t ADD COLUMN b int NOT NULL DEFAULT 5",
        "INSERT INTO t VALUES (2, 'y', 7)", "ALTER TABLE t DROP COLUMN a",
        "INSERT INTO t VALUES (3, 8)", "CREATE TABLE fresh (k text PRIMARY KEY)",
        "INSERT INTO fresh VALUES ('new')")  # fmt: skip
    one, two, three, fresh = h.wait_changes(4)
    assert one.value["after"] == {"id": 1, "a": "x"}
    assert two.value["after"] == {"id": 2, "a": "y", "b": 7}
    assert three.value["after"] == {"id": 3, "b": 8}
    names = [f.name for f in two.value_schema.field("after").schema.fields]
    assert names == ["id", "a", "b"]
    assert fresh.topic.endswith(".public.fresh") and fresh.key == {"k": "new"}


def test_database_restart_under_the_connector(harness, sql, postgres) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY)")
    h = harness()
    streaming(h)
    sql("INSERT INTO t SELECT generate_series(1, 100)")
    h.wait_changes(100)
    postgres.restart("immediate")  # as after a crash: connections die mid-stream
    sql("INSERT INTO t SELECT generate_series(101, 200)")
    h.wait_changes(200, timeout=30)
    sql("INSERT INTO t VALUES (201)")
    changes = h.wait_changes(201)
    assert [r.value["after"]["id"] for r in changes] == list(range(1, 202))


def test_heartbeats_advance_the_slot_on_a_quiet_database(harness, sql, postgres,
                                                          pg_database) -> None:  # fmt: skip
    sql("CREATE TABLE t (id int PRIMARY KEY)")
    h = harness(**{"heartbeat.interval.ms": "50"})
    streaming(h)
    slot = h.config["slot.name"]
    with psycopg.connect(postgres.dsn("postgres"), autocommit=True) as other:
        other.execute("CREATE TABLE IF NOT EXISTS noise (x int)")
        other.execute("INSERT INTO noise SELECT generate_series(1, 1000)")
        wal_after_noise = str_to_lsn(other.execute("SELECT pg_current_wal_lsn()::text")
                                     .fetchone()[0])  # fmt: skip
    topic = f"__debezium-heartbeat.{h.config['topic.prefix']}"

    def beat_past_noise(records) -> bool:
        return any(r.topic == topic and r.source_offset["lsn"] >= wal_after_noise
                   for r in records)  # fmt: skip

    h.poll_until(beat_past_noise, what="a heartbeat past the other database's WAL")
    beat = next(r for r in h.records if r.topic == topic)
    assert beat.key == {"serverName": h.config["topic.prefix"]} and "ts_ms" in beat.value
    h.ack()
    h.poll_until(beat_past_noise, what="another heartbeat")
    h.ack()  # the slot is confirmed one commit behind the stored offset
    # the status update is asynchronous on the server side: wait for it, with a deadline
    h.poll_until(lambda _: confirmed_flush(postgres, pg_database, slot) >= wal_after_noise,
                 what="the slot past the other database's WAL")  # fmt: skip


def test_slot_follows_acknowledged_changes_only(harness, sql, postgres, pg_database) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY)")
    h = harness()
    streaming(h)
    slot = h.config["slot.name"]
    before = confirmed_flush(postgres, pg_database, slot)
    sql("INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)")
    h.wait_changes(2)
    h.task.commit()
    assert confirmed_flush(postgres, pg_database, slot) == before  # nothing acknowledged yet
    h.ack(1)
    h.ack(1)
    first_commit = h.records[0].source_offset["lsn_commit"]
    streaming(h)  # a poll: the status update is on the wire before the slot is read
    h.poll_until(lambda _: confirmed_flush(postgres, pg_database, slot) >= first_commit,
                 what="the slot at the acknowledged commit")  # fmt: skip
    assert confirmed_flush(postgres, pg_database, slot) < h.records[1].source_offset["lsn_commit"]


def test_snapshot_modes(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)")
    never = harness(**{"snapshot.mode": "never", "slot.name": "s_never"})
    streaming(never)
    only = harness(**{"snapshot.mode": "initial_only", "slot.name": "s_only",
                      "topic.prefix": "only"})  # fmt: skip
    only.wait_changes(2)
    sql("INSERT INTO t VALUES (3)")
    assert [r.value["op"] for r in never.wait_changes(1)] == ["c"]
    for _ in range(3):
        only.poll_once()
    assert [r.value["op"] for r in only.changes()] == ["r", "r"]


def test_when_needed_resnapshots_when_the_slot_is_gone(harness, sql, postgres, pg_database):
    sql("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    h = harness(**{"snapshot.mode": "when_needed"})
    h.wait_changes(1)
    h.ack()
    h.stop()
    sql(f"SELECT pg_drop_replication_slot('{h.config['slot.name']}')")
    h2 = harness(store=h.store, **{"snapshot.mode": "when_needed"})
    assert [r.value["op"] for r in h2.wait_changes(1)] == ["r"]


def test_crash_mid_snapshot_starts_the_snapshot_over(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t SELECT generate_series(1, 5000)")
    h = harness(**{"max.batch.size": "1000", "snapshot.fetch.size": "500"})
    h.wait_changes(1000)
    h.ack()  # a snapshot offset without snapshot_completed
    h.stop()
    h2 = harness(store=h.store, **{"max.batch.size": "1000"})
    changes = h2.wait_changes(5000)
    assert sorted(r.value["after"]["id"] for r in changes) == list(range(1, 5001))
    assert changes[-1].source_offset["snapshot_completed"] is True
    h2.ack()
    h2.stop()
    sql("INSERT INTO t VALUES (5001)")
    h3 = harness(store=h2.store)
    assert [r.value["op"] for r in h3.wait_changes(1)] == ["c"]


def test_large_transaction_streams_in_batches(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY, pad text)")
    h = harness(**{"max.batch.size": "1000"})
    streaming(h)
    sql("INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 50000) g")
    sizes = []
    while len(h.changes()) < 50000:
        got = h.poll_once()
        sizes.append(len(got))
        assert len(sizes) < 1000, "stalled"
    assert max(sizes) <= 1000
    assert [r.value["after"]["id"] for r in h.changes()] == list(range(1, 50001))


def test_slot_drop_on_stop(harness, sql, postgres, pg_database) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY)")
    h = harness(**{"slot.drop.on.stop": "true"})
    streaming(h)
    h.stop()
    with psycopg.connect(postgres.dsn(pg_database)) as conn:
        slots = conn.execute("SELECT slot_name FROM pg_replication_slots").fetchall()
    assert (h.config["slot.name"],) not in slots


def test_replication_lag_metrics(harness, sql) -> None:
    sql("CREATE TABLE lagged (id int PRIMARY KEY)")
    h = harness()
    streaming(h)
    idle = h.task.metrics()
    assert idle["snapshot_running"] == 0 and idle["replication_lag_ms"] == 0
    sql("INSERT INTO lagged SELECT generate_series(1, 500)")
    h.wait_changes(500)
    read = h.task.metrics()
    assert read["replication_lag_bytes"] > 0  # read, not yet confirmed to the server
    assert 0 <= read["replication_lag_ms"] < 30_000  # commit -> read, on one machine
    h.ack()
    h.ack()  # the second commit confirms what the first one stored (see commit())
    confirmed = h.task.metrics()
    assert confirmed["replication_lag_bytes"] < read["replication_lag_bytes"]
