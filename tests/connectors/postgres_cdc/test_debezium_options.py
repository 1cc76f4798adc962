"""Debezium's column, key, masking and transaction options against a real PostgreSQL, in the
snapshot and in the stream (``TaskHarness`` drives the task as the worker would)."""

from __future__ import annotations

import hashlib
from typing import Any

from connectors.postgres_cdc._hashing import java_serialized_string


def fields(schema: Any) -> list[str]:
    return [f.name for f in schema.fields]


def row_schema(record: Any) -> Any:
    return record.value_schema.field("after").schema


def test_column_exclude_list_hides_columns_everywhere(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY, name text, secret text)",
        "ALTER TABLE t REPLICA IDENTITY FULL",
        "INSERT INTO t VALUES (1, 'a', 's1')")  # fmt: skip
    # upper case: Debezium matches case-insensitively
    h = harness(**{"column.exclude.list": "PUBLIC.T.SECRET"})
    snap = h.wait_changes(1)[0]
    assert snap.value["after"] == {"id": 1, "name": "a"}
    assert fields(row_schema(snap)) == ["id", "name"]
    sql("INSERT INTO t VALUES (2, 'b', 's2')", "UPDATE t SET secret = 'x', name = 'c'",
        "DELETE FROM t WHERE id = 1")  # fmt: skip
    c, u1, u2, d = h.wait_changes(5)[1:]
    assert c.value["after"] == {"id": 2, "name": "b"}
    assert {u1.value["before"]["id"], u2.value["before"]["id"]} == {1, 2}
    assert all("secret" not in (r.value["before"] or {}) for r in (u1, u2, d))
    assert all("secret" not in (r.value["after"] or {}) for r in (c, u1, u2))
    assert d.value["before"] == {"id": 1, "name": "c"} and d.key == {"id": 1}
    assert all("s1" not in repr(r.value) and "s2" not in repr(r.value) for r in h.records)


def test_column_include_list_keeps_the_key_columns_in_the_key(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY, name text, secret text)",
        "INSERT INTO t VALUES (1, 'a', 's')")  # fmt: skip
    h = harness(**{"column.include.list": r"public\.t\.name"})
    snap = h.wait_changes(1)[0]
    assert snap.value["after"] == {"name": "a"} and snap.key == {"id": 1}
    assert fields(snap.key_schema) == ["id"]
    sql("INSERT INTO t VALUES (2, 'b', 's')")
    assert h.wait_changes(2)[1].value["after"] == {"name": "b"}


def test_message_key_columns_make_the_key(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY, region text, code int NOT NULL)",
        "ALTER TABLE t REPLICA IDENTITY FULL",
        "CREATE TABLE other (id int PRIMARY KEY)",
        "INSERT INTO t VALUES (1, 'eu', 7)", "INSERT INTO other VALUES (1)")  # fmt: skip
    # rule order gives key order: code before region
    h = harness(**{"message.key.columns": r"public\.t:code,region;public\.nothing:x"})
    got = {r.topic.rsplit(".", 1)[1]: r for r in h.wait_changes(2)}
    assert got["t"].key == {"code": 7, "region": "eu"} and got["other"].key == {"id": 1}
    key_schema = got["t"].key_schema
    assert key_schema.name.endswith(".public.t.Key")
    assert [(f.name, f.schema.optional) for f in key_schema.fields] == [
        ("code", False),
        ("region", True),
    ]
    sql("UPDATE t SET region = 'us' WHERE id = 1", "UPDATE t SET id = 5 WHERE id = 1")
    changes = h.wait_changes(5)[2:]
    # the key changed: delete (+ tombstone) of the old key, create of the new; a change of
    # the primary key alone is an update, since it is not the key any more
    assert [r.value["op"] for r in changes] == ["d", "c", "u"]
    assert changes[0].key == {"code": 7, "region": "eu"}
    assert changes[1].key == {"code": 7, "region": "us"}
    tombstone = [r for r in h.records if r.value is None]
    assert [r.key for r in tombstone] == [{"code": 7, "region": "eu"}]


def test_masking_and_truncation(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY, email text, card varchar(10), note text, "
        "short varchar(2), n int, ssn text)",
        "INSERT INTO t VALUES (1, 'a@b.c', '4111', 'abcdef', 'xy', 5, NULL)")  # fmt: skip
    h = harness(**{
        "column.mask.with.4.chars": r"public\.t\.(email|n|ssn)",
        "column.mask.hash.SHA-256.with.salt.salt": r"public\.t\.card",
        "column.mask.hash.v2.MD5.with.salt.pepper": r"public\.t\.email",  # masked first
        "column.truncate.to.3.chars": r"public\.t\.note,public\.t\.short",
    })  # fmt: skip
    snap = h.wait_changes(1)[0]
    after = snap.value["after"]
    v1 = hashlib.sha256(b"salt" + java_serialized_string("4111")).hexdigest()
    assert after == {"id": 1, "email": "****", "card": v1[:10], "note": "abc", "short": "xy",
                     "n": 5, "ssn": "****"}  # fmt: skip
    params = {f.name: f.schema.parameters for f in row_schema(snap).fields}
    assert params["email"] == params["card"] == params["n"] == {"masked": "true"}
    assert params["note"] == {"truncateLength": "3"} and params["short"] is None
    sql("INSERT INTO t VALUES (2, NULL, NULL, 'zzzzz', 'q', 1, 'x')")
    streamed = h.wait_changes(2)[1].value["after"]
    assert streamed == {"id": 2, "email": "****", "card": None, "note": "zzz", "short": "q",
                        "n": 1, "ssn": "****"}  # fmt: skip


def test_hashes_match_debeziums_published_vectors(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY, a text, b text)",
        "INSERT INTO t VALUES (1, 'hello', 'hello')")  # fmt: skip
    h = harness(**{"column.mask.hash.SHA-256.with.salt.salt": r"public\.t\.a",
                   "column.mask.hash.v2.SHA-256.with.salt.salt": r"public\.t\.b"})  # fmt: skip
    after = h.wait_changes(1)[0].value["after"]
    # MaskStringsTest in Debezium's repository: SHA-256, salt "salt", value "hello"
    assert after["a"] == "af5843a0f0e728ab0332c8888b6e1190bfb79e584f0d40538de8f10df6ef29c6"
    assert after["b"] == "cd31b3b98ece60cb739c0bf770b2de892ae0ad133f645513c3d83f08757a843a"


def test_transaction_metadata(harness, sql) -> None:
    sql("CREATE TABLE a (id int PRIMARY KEY)", "CREATE TABLE b (id int PRIMARY KEY)",
        "INSERT INTO a VALUES (100)")  # fmt: skip
    h = harness(**{"provide.transaction.metadata": "true", "max.batch.size": "2"})
    snap = h.wait_changes(1)[0]
    assert snap.value["transaction"] is None  # snapshot events carry no block
    sql("BEGIN; INSERT INTO a VALUES (1); INSERT INTO b VALUES (1); INSERT INTO a VALUES (2); "
        "DELETE FROM a WHERE id = 100; COMMIT")  # fmt: skip
    topic = f"{h.config['topic.prefix']}.transaction"
    h.poll_until(lambda rs: sum(r.topic == topic for r in rs) >= 2, what="BEGIN and END")
    tx = [r for r in h.records if r.topic == topic]
    begin, end = tx[0].value, tx[1].value
    assert begin["status"] == "BEGIN" and begin["event_count"] is None
    assert begin["data_collections"] is None and tx[0].key == {"id": begin["id"]}
    events = h.changes()[1:]
    xid = events[0].value["source"]["txId"]
    begin_xid, begin_lsn = map(int, begin["id"].split(":"))
    end_xid, end_lsn = map(int, end["id"].split(":"))
    assert begin_xid == end_xid == xid
    assert begin_lsn <= events[0].value["source"]["lsn"] <= events[-1].value["source"]["lsn"]
    assert events[-1].value["source"]["lsn"] <= end_lsn
    blocks = [(b["total_order"], b["data_collection_order"])
              for b in (r.value["transaction"] for r in events)]  # fmt: skip
    assert blocks == [(1, 1), (2, 1), (3, 2), (4, 3)]
    for r in events:  # id = <xid>:<the change's LSN>
        assert r.value["transaction"]["id"] == f"{xid}:{r.value['source']['lsn']}"
    assert end["status"] == "END" and end["event_count"] == 4
    assert end["data_collections"] == [
        {"data_collection": "public.a", "event_count": 3},
        {"data_collection": "public.b", "event_count": 1},
    ]
    assert tx[0].key_schema.name == "io.debezium.connector.common.TransactionMetadataKey"
    assert tx[1].value_schema.name == "io.debezium.connector.common.TransactionMetadataValue"
    # the order of everything: BEGIN, the changes (and the tombstone), END
    order = [r.topic.rsplit(".", 1)[1] if r.value else "tomb" for r in h.records[1:]]
    assert order == ["transaction", "a", "b", "a", "a", "tomb", "transaction"]


def test_transaction_counts_survive_a_restart_mid_transaction(harness, sql) -> None:
    sql("CREATE TABLE a (id int PRIMARY KEY)")
    h = harness(**{"provide.transaction.metadata": "true", "max.batch.size": "2",
                   "snapshot.mode": "no_data"})  # fmt: skip
    h.poll_until(lambda _: h.task._repl is not None and h.task._repl.streaming, what="streaming")
    sql("INSERT INTO a SELECT generate_series(1, 5)")
    h.poll_until(lambda rs: len(rs) >= 3, what="BEGIN and two inserts")
    h.ack(3)
    h.ack(3)
    h.stop()
    h2 = harness(store=h.store, **{"provide.transaction.metadata": "true",
                                   "snapshot.mode": "no_data"})  # fmt: skip
    h2.poll_until(lambda rs: any(r.value and r.value.get("status") == "END" for r in rs),
                  what="END")  # fmt: skip
    assert not any(r.value.get("status") == "BEGIN" for r in h2.records)  # not sent twice
    orders = [r.value["transaction"]["total_order"] for r in h2.changes()]
    assert orders == [3, 4, 5]
    assert h2.records[-1].value["event_count"] == 5


def test_snapshot_mode_always_snapshots_on_every_start(harness, sql) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY, v text)", "INSERT INTO t VALUES (1, 'a')")
    h = harness(**{"snapshot.mode": "always"})
    h.wait_changes(1)
    sql("INSERT INTO t VALUES (2, 'b')")
    h.wait_changes(2)
    h.ack()
    h.ack()
    h.stop()
    sql("UPDATE t SET v = 'z' WHERE id = 1")
    h2 = harness(store=h.store, **{"snapshot.mode": "ALWAYS"})
    snap = h2.wait_changes(2)
    assert [r.value["op"] for r in snap] == ["r", "r"]
    assert {r.value["after"]["id"]: r.value["after"]["v"] for r in snap} == {1: "z", 2: "b"}
    sql("INSERT INTO t VALUES (3, 'c')")
    assert h2.wait_changes(3)[2].value["op"] == "c"


def test_configuration_based_snapshot_modes(harness, sql, cdc_config) -> None:
    sql("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    base = "snapshot.mode.configuration.based."
    data_slot, stream_slot = cdc_config["slot.name"] + "_d", cdc_config["slot.name"] + "_s"
    data_only = harness(**{"snapshot.mode": "configuration_based", base + "snapshot.data": "true",
                           "slot.name": data_slot, "topic.prefix": "cbdata"})  # fmt: skip
    stream_only = harness(**{"snapshot.mode": "configuration_based",
                             base + "start.stream": "true", "slot.name": stream_slot,
                             "topic.prefix": "cbstream"})  # fmt: skip
    data_only.wait_changes(1)
    stream_only.poll_until(lambda _: stream_only.task._repl is not None
                           and stream_only.task._repl.streaming, what="streaming")  # fmt: skip
    sql("INSERT INTO t VALUES (2)")
    assert [r.value["op"] for r in stream_only.wait_changes(1)] == ["c"]
    for _ in range(3):
        data_only.poll_once()
    assert [r.value["op"] for r in data_only.changes()] == ["r"]  # snapshot, then no stream
    # snapshot.on.data.error: the committed offset's slot is gone -> a new snapshot
    stream_only.ack()
    stream_only.ack()
    stream_only.stop()
    sql(f"SELECT pg_drop_replication_slot('{stream_slot}')")
    again = harness(store=stream_only.store, **{
        "snapshot.mode": "configuration_based", base + "start.stream": "true",
        base + "snapshot.on.data.error": "true", "slot.name": stream_slot,
        "topic.prefix": "cbstream"})  # fmt: skip
    assert [r.value["op"] for r in again.wait_changes(2)] == ["r", "r"]


def test_table_filters_match_case_insensitively(harness, sql) -> None:
    sql("CREATE TABLE orders (id int PRIMARY KEY)", "CREATE TABLE other (id int PRIMARY KEY)",
        "INSERT INTO orders VALUES (1)", "INSERT INTO other VALUES (1)")  # fmt: skip
    h = harness(**{"table.include.list": r"PUBLIC\.ORDERS"})
    h.wait_changes(1)
    for _ in range(2):
        h.poll_once()
    assert [r.topic.rsplit(".", 1)[1] for r in h.changes()] == ["orders"]
