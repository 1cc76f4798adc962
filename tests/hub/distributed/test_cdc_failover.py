"""A PostgreSQL CDC pipeline through a worker's kill -9 in a group of three (issue 20): the
task moves to another worker, takes over the replication slot, and no change is lost."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from tests.connectors.postgres_cdc.test_pipeline_e2e import (
    INSERT_RANGE,
    TopicReader,
    debezium_config,
)
from tests.fixtures.broker import wait_until


def test_cdc_pipeline_loses_no_change_through_a_kill_9(
    group_of: Any, postgres: Any, pg_database: str
) -> None:
    group = group_of(3)
    tag = uuid.uuid4().hex[:6]
    with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
        conn.execute("CREATE SCHEMA inventory")
        conn.execute("CREATE TABLE inventory.customers (id int PRIMARY KEY, email text)")
        conn.execute(INSERT_RANGE, (1, 200))
    via = group.non_leader()
    via.call(
        "POST",
        "/connectors",
        {"name": "cdc", "config": debezium_config(postgres, pg_database, tag)},
    )
    reader = TopicReader(group.broker.bootstrap, f"dbserver{tag}.inventory.customers")
    try:
        wait_until(lambda: len(set(reader.ids("r"))) >= 200, 90, "the snapshot in the topic")
        victim = group.owner("cdc-0")
        victim.kill()
        with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
            for start in range(201, 401, 50):  # changes made while the task moves
                conn.execute(INSERT_RANGE, (start, start + 49))
        survivors = {w.worker_id for w in group.running()}

        def moved() -> bool:
            status, body = group.running()[0].request("GET", "/connectors/cdc/status")
            tasks = body["tasks"] if status == 200 else []
            return (
                bool(tasks)
                and tasks[0]["state"] == "RUNNING"
                and (tasks[0]["worker_id"] in survivors)
            )

        wait_until(moved, 90, "the CDC task running on a survivor")
        expected = set(range(1, 401))
        wait_until(lambda: set(reader.ids("r", "c")) >= expected, 120, "every row in the topic")
    finally:
        reader.close()
