"""End to end through the REST API of a real ``sluice up`` subprocess: a Debezium
PostgresConnector config POSTed as-is, change events read back from the topic with
confluent-kafka, and a kill -9 of the hub mid-stream with no change lost."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import psycopg
import pytest

import hub.rest.app
from tests.fixtures import hub as hub_fixtures
from tests.fixtures.broker import wait_until


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Any]:
    proc = hub_fixtures.HubProcess(tmp_path / "hub", {"offset.flush.interval.ms": 200})
    proc.start()
    yield proc
    proc.stop()


def debezium_config(postgres, dbname: str, tag: str) -> dict[str, str]:
    """What a Debezium user already has (Debezium's tutorial config, pointed at our DB)."""
    return {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "tasks.max": "1",
        "database.hostname": postgres.host,
        "database.port": str(postgres.port),
        "database.user": postgres.user,
        "database.password": postgres.password,
        "database.dbname": dbname,
        "topic.prefix": f"dbserver{tag}",
        "plugin.name": "pgoutput",
        "slot.name": f"debezium_{tag}",
        "publication.name": f"dbz_publication_{tag}",
        "table.include.list": "inventory.customers",
        "snapshot.mode": "initial",
        "tombstones.on.delete": "true",
        "heartbeat.interval.ms": "1000",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "true",
    }


INSERT_RANGE = (
    "INSERT INTO inventory.customers SELECT g, 'x' FROM generate_series(%s::int, %s::int) g"
)


class TopicReader:
    """Reads a topic from the beginning in the background; keeps parsed (key, value) JSON."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.messages: list[tuple[Any, Any]] = []
        self._stop = threading.Event()
        self._consumer = confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"it-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
            "topic.metadata.refresh.interval.ms": 500,
        })  # fmt: skip
        self._consumer.subscribe([topic])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            msg = self._consumer.poll(0.2)
            if msg is None or msg.error():
                continue
            key = json.loads(msg.key()) if msg.key() else None
            value = json.loads(msg.value()) if msg.value() else None
            self.messages.append((key, value))

    def ids(self, *ops: str) -> list[int]:
        out = []
        for _, value in list(self.messages):
            payload = value and value["payload"]
            if payload and payload["op"] in ops:
                out.append(payload["after"]["id"])
        return out

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._consumer.close()


def test_debezium_config_as_is_and_kill_9_mid_stream(hub, postgres, pg_database) -> None:
    tag = uuid.uuid4().hex[:6]
    with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
        conn.execute("CREATE SCHEMA inventory")
        conn.execute("CREATE TABLE inventory.customers (id int PRIMARY KEY, email text)")
        conn.execute("CREATE TABLE inventory.other (id int PRIMARY KEY)")
        conn.execute("INSERT INTO inventory.customers SELECT g, 'c' || g || '@example.com' "
                     "FROM generate_series(1, 1000) g")  # fmt: skip
    config = debezium_config(postgres, pg_database, tag)
    status, body = hub.request("POST", "/connectors", {"name": "inventory-connector",
                                                       "config": config})  # fmt: skip
    assert status == 201, body
    reader = TopicReader(hub.bootstrap, f"dbserver{tag}.inventory.customers")
    try:
        wait_until(lambda: len(reader.ids("r")) >= 1000, 60, "the snapshot in the topic")
        key, value = reader.messages[0]
        assert key["schema"]["name"] == f"dbserver{tag}.inventory.customers.Key"
        assert key["payload"] == {"id": 1}
        assert value["schema"]["name"] == f"dbserver{tag}.inventory.customers.Envelope"
        payload = value["payload"]
        assert payload["op"] == "r" and payload["before"] is None
        assert payload["after"] == {"id": 1, "email": "c1@example.com"}
        assert payload["source"]["connector"] == "postgresql"
        assert payload["source"]["schema"] == "inventory"
        _, state = hub.request("GET", "/connectors/inventory-connector/status")
        assert state["connector"]["state"] == "RUNNING", state
        assert [t["state"] for t in state["tasks"]] == ["RUNNING"], state

        done = threading.Event()

        def writer() -> None:
            with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
                for start in range(1001, 5001, 100):
                    conn.execute(INSERT_RANGE, (start, start + 99))
                    conn.execute("INSERT INTO inventory.other VALUES (%s)", (start,))
            done.set()

        def committed_lsn() -> int:
            _, body = hub.request("GET", "/connectors/inventory-connector/offsets")
            return max((int(o["offset"].get("lsn_commit", 0)) for o in body["offsets"]), default=0)

        # the snapshot's own offset (its LSN), committed before any change is streamed
        snapshot_lsn = wait_until(committed_lsn, 30, "the snapshot's offset committed")

        thread = threading.Thread(target=writer)
        thread.start()
        # Kill only once a streamed transaction's offset is committed: then a replay of
        # everything since the snapshot would be a bug, not the luck of the commit interval
        # (the whole stream can now pass between two offset commits).
        wait_until(
            lambda: len(reader.ids("c")) >= 500 and committed_lsn() > snapshot_lsn,
            60,
            "streaming mid-flight with a streamed offset committed",
        )
        committed_at_kill = committed_lsn()
        hub.kill()
        thread.join()
        hub.start()
        try:
            wait_until(lambda: set(reader.ids("c")) >= set(range(1001, 5001)), 90,
                       "every insert, despite the kill -9")  # fmt: skip
        except AssertionError as exc:  # say where it stuck: status, what arrived, the hub's log
            _, state = hub.request("GET", "/connectors/inventory-connector/status")
            missing = sorted(set(range(1001, 5001)) - set(reader.ids("c")))
            detail = f"status {state}; {len(missing)} missing, first {missing[:1]}"
            raise AssertionError(f"{exc}; {detail}; hub log:\n{hub.log()[-4000:]}") from None
        created = reader.ids("c")
        assert set(created) == set(range(1001, 5001))  # nothing lost, nothing invented
        # at-least-once: only what followed the last committed offset at the kill comes twice
        twice = len(created) - len(set(created))
        if twice >= 4000:
            _, offsets = hub.request("GET", "/connectors/inventory-connector/offsets")
            raise AssertionError(
                f"every change came twice: committed lsn_commit {committed_at_kill} at the kill "
                f"(snapshot at {snapshot_lsn}), offsets now {offsets}, "
                f"{len(reader.ids('r'))} snapshot events; hub log:\n{hub.log()[-6000:]}"
            )
        with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
            conn.execute("DELETE FROM inventory.customers WHERE id = 1")
        wait_until(lambda: any(k == {"schema": k["schema"], "payload": {"id": 1}} and v is None
                               for k, v in reader.messages if k), 30, "the tombstone")  # fmt: skip
    finally:
        reader.close()


def test_bad_credentials_are_a_failed_status_with_the_reason(hub, postgres, pg_database) -> None:
    config = debezium_config(postgres, pg_database, uuid.uuid4().hex[:6])
    config["database.dbname"] = "does_not_exist"
    status, body = hub.request("POST", "/connectors", {"name": "bad", "config": config})
    assert status == 201, body

    def failed() -> Any:
        _, state = hub.request("GET", "/connectors/bad/status")
        tasks = state.get("tasks") or []
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]

    task = wait_until(failed, 30, "the task to be FAILED")
    assert "database.dbname" in task["trace"]
    # the plugin is listed, and validation names the key a Debezium user must change
    _, plugins = hub.request("GET", "/connector-plugins")
    assert "io.debezium.connector.postgresql.PostgresConnector" in {p["class"] for p in plugins}
    plugin = "io.debezium.connector.postgresql.PostgresConnector"
    status, result = hub.request("PUT", f"/connector-plugins/{plugin}/config/validate",
                                 {**config, "tasks.max": "2"})  # fmt: skip
    assert status == 200 and result["error_count"] >= 1, result
    errors = {c["value"]["name"]: c["value"]["errors"] for c in result["configs"]}
    assert any("must be 1" in e for e in errors["tasks.max"])


def test_cdc_through_extract_new_record_state_to_the_topic(hub, postgres, pg_database) -> None:
    """A Debezium config with column options, transaction metadata and Debezium's unwrap SMT
    (by its Java class name), POSTed to a real hub: the topic holds flat rows."""
    tag = uuid.uuid4().hex[:6]
    with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
        conn.execute("CREATE SCHEMA inventory")
        conn.execute("CREATE TABLE inventory.customers (id int PRIMARY KEY, name text, "
                     "email text, card text)")  # fmt: skip
        conn.execute("INSERT INTO inventory.customers VALUES (1, 'ann', 'a@x', '4111')")
    config = {
        **debezium_config(postgres, pg_database, tag),
        "heartbeat.interval.ms": "0",
        "column.exclude.list": r"inventory\.customers\.email",
        "column.mask.with.3.chars": r"inventory\.customers\.card",
        "provide.transaction.metadata": "true",
        "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
        "transforms.unwrap.add.fields": "op,table,source.ts_ms",
        "transforms.unwrap.add.headers": "op",
    }
    status, body = hub.request("POST", "/connectors", {"name": "unwrapped", "config": config})
    assert status == 201, body
    reader = TopicReader(hub.bootstrap, f"dbserver{tag}.inventory.customers")
    tx_reader = TopicReader(hub.bootstrap, f"dbserver{tag}.transaction")
    try:
        wait_until(lambda: len(reader.messages) >= 1, 60, "the snapshot row")
        with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
            conn.execute("INSERT INTO inventory.customers VALUES (2, 'bob', 'b@x', '5500')")
            conn.execute("UPDATE inventory.customers SET name = 'ann2' WHERE id = 1")
            conn.execute("DELETE FROM inventory.customers WHERE id = 2")
        wait_until(lambda: len(reader.messages) >= 4, 60, "insert, update and delete")
        rows = [value["payload"] for _, value in reader.messages]
        assert [{k: v for k, v in r.items() if k != "__source_ts_ms"} for r in rows] == [
            {"id": 1, "name": "ann", "card": "***", "__deleted": "false", "__op": "r",
             "__table": "customers"},
            {"id": 2, "name": "bob", "card": "***", "__deleted": "false", "__op": "c",
             "__table": "customers"},
            {"id": 1, "name": "ann2", "card": "***", "__deleted": "false", "__op": "u",
             "__table": "customers"},
            {"id": 2, "name": None, "card": "***", "__deleted": "true", "__op": "d",
             "__table": "customers"},
        ]  # fmt: skip
        assert all(isinstance(r["__source_ts_ms"], int) for r in rows)
        schema = reader.messages[0][1]["schema"]
        assert schema["name"] == f"dbserver{tag}.inventory.customers.Value"
        assert [f["field"] for f in schema["fields"]] == [
            "id",
            "name",
            "card",
            "__deleted",
            "__op",
            "__table",
            "__source_ts_ms",
        ]
        assert len(reader.messages) == 4  # rewrite drops the delete's tombstone
        # the transaction topic is no change event: it passes the SMT unchanged
        wait_until(lambda: len(tx_reader.messages) >= 6, 60, "three BEGIN/END pairs")
        statuses = [value["payload"]["status"] for _, value in tx_reader.messages]
        assert statuses == ["BEGIN", "END"] * 3
        assert tx_reader.messages[1][1]["payload"]["event_count"] == 1
    finally:
        reader.close()
        tx_reader.close()
