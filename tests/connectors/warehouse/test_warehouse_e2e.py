"""End to end through the REST API of a real ``sluice up``: a Debezium-style postgres_cdc
source on one database -> topic -> the warehouse sink (configured as Confluent's JDBC sink,
one config, no unwrap transform) into a second database; the target table converges to the
source through inserts, updates and deletes. A record that does not fit fails the task with
the record's coordinates in the status trace."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import connectors.postgres_cdc.connector  # noqa: F401  (a broken import must fail, not skip)
import hub.rest.app
from tests.fixtures import hub as hub_fixtures
from tests.fixtures.broker import wait_until

JSON = "org.apache.kafka.connect.json.JsonConverter"
CONVERTERS = {
    "key.converter": JSON,
    "value.converter": JSON,
    "key.converter.schemas.enable": "true",
    "value.converter.schemas.enable": "true",
}


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Any]:
    proc = hub_fixtures.HubProcess(tmp_path / "hub", {"offset.flush.interval.ms": 200})
    proc.start()
    yield proc
    proc.stop()


def source_config(postgres: Any, dbname: str, tag: str) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "tasks.max": "1", "database.hostname": postgres.host,
        "database.port": str(postgres.port), "database.user": postgres.user,
        "database.password": postgres.password, "database.dbname": dbname,
        "topic.prefix": f"src{tag}", "plugin.name": "pgoutput", "slot.name": f"wh_{tag}",
        "publication.name": f"wh_pub_{tag}", "table.include.list": "inventory.customers",
        "snapshot.mode": "initial", **CONVERTERS,
    }  # fmt: skip


def sink_config(postgres: Any, dbname: str, topic: str) -> dict[str, str]:
    """What a Confluent JDBC sink user writes, minus the ExtractNewRecordState transform."""
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "tasks.max": "1",
        "topics": topic,
        "connection.url": f"jdbc:postgresql://{postgres.host}:{postgres.port}/{dbname}",
        "connection.user": postgres.user, "connection.password": postgres.password,
        "insert.mode": "upsert", "pk.mode": "record_key", "delete.enabled": "true",
        "auto.create": "true", "auto.evolve": "true", **CONVERTERS,
    }  # fmt: skip


def table(postgres: Any, dbname: str, name: str) -> list[tuple[Any, ...]] | None:
    with psycopg.connect(postgres.dsn(dbname), autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()
        if not exists or exists[0] is None:
            return None
        return conn.execute(f"SELECT id, email, score, born FROM {name} ORDER BY id").fetchall()


def topic_exists(bootstrap: str, topic: str) -> bool:
    from confluent_kafka.admin import AdminClient

    return topic in AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=5).topics


def test_postgres_cdc_to_warehouse_converges(hub: Any, postgres: Any, pg_database: str) -> None:
    tag = uuid.uuid4().hex[:6]
    target_db = postgres.create_database()
    with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
        conn.execute("CREATE SCHEMA inventory")
        conn.execute("CREATE TABLE inventory.customers (id int PRIMARY KEY, email text, "
                     "score numeric(10,2), born date)")  # fmt: skip
        conn.execute("INSERT INTO inventory.customers SELECT g, 'c' || g || '@example.com', "
                     "g * 1.5, date '2000-01-01' + g FROM generate_series(1, 500) g")  # fmt: skip
    status, body = hub.request("POST", "/connectors", {"name": "src", "config": source_config(
        postgres, pg_database, tag)})  # fmt: skip
    assert status == 201, body
    topic = f"src{tag}.inventory.customers"
    wait_until(lambda: topic_exists(hub.bootstrap, topic), 30, "the change-event topic")
    status, body = hub.request("POST", "/connectors", {"name": "wh", "config": sink_config(
        postgres, target_db, topic)})  # fmt: skip
    assert status == 201, body

    def converged() -> bool:
        # ${topic} = src<tag>.inventory.customers -> table inventory.customers in the target
        source = table(postgres, pg_database, "inventory.customers")
        return source is not None and table(postgres, target_db, "inventory.customers") == source

    wait_until(converged, 45, "the snapshot in the target table")
    with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
        conn.execute("UPDATE inventory.customers SET email = 'changed' WHERE id % 10 = 0")
        conn.execute("DELETE FROM inventory.customers WHERE id % 7 = 0")
        conn.execute("INSERT INTO inventory.customers SELECT g, 'late', NULL, NULL "
                     "FROM generate_series(501, 600) g")  # fmt: skip
        conn.execute("UPDATE inventory.customers SET score = 0 WHERE id > 590")
    wait_until(converged, 45, "inserts, updates and deletes in the target table")
    rows = table(postgres, target_db, "inventory.customers")
    assert rows is not None and len(rows) == 600 - 500 // 7
    _, state = hub.request("GET", "/connectors/wh/status")
    assert [t["state"] for t in state["tasks"]] == ["RUNNING"], state


def test_a_record_that_does_not_fit_fails_the_task_naming_it(hub: Any, tmp_path: Path) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": hub.bootstrap})
    for i, value in enumerate([b'{"id": 1, "v": "a"}', b'{"v": "no id"}', b'{"id": 3}']):
        producer.produce("plain", value=value, key=str(i).encode())
    producer.flush(10)
    config = {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "topics": "plain",
        "connection.url": f"jdbc:sqlite:{tmp_path / 'w.db'}", "auto.create": "true",
        "insert.mode": "upsert", "pk.mode": "record_value", "pk.fields": "id",
        "value.converter": JSON, "value.converter.schemas.enable": "false",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    }  # fmt: skip
    status, body = hub.request("POST", "/connectors", {"name": "wh", "config": config})
    assert status == 201, body

    def failed() -> Any:
        _, state = hub.request("GET", "/connectors/wh/status")
        tasks = state.get("tasks") or []
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]

    task = wait_until(failed, 30, "the task to be FAILED")
    assert "plain-0@1" in task["trace"] and "pk.fields" in task["trace"], task["trace"]
