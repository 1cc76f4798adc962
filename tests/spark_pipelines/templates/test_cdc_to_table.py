from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from tests.spark_pipelines._kafka import create_topic, produce

pytest.importorskip("pyspark")
pytestmark = pytest.mark.timeout(600)


def _event(op: str, before: dict | None, after: dict | None, envelope: bool = False) -> str:
    payload = {"before": before, "after": after, "op": op, "ts_ms": 1}
    return json.dumps({"schema": {}, "payload": payload} if envelope else payload)


def _u(i: int, name: str, age: int) -> dict:
    return {"id": i, "name": name, "age": age}


def test_current_state_with_deletes_to_table_and_snapshot(run_once, broker, topic_name, tmp_path):
    topic = f"{topic_name}-users"
    create_topic(broker.bootstrap, topic, 2)
    db = f"sqlite:///{tmp_path / 'wh.db'}"
    config = {
        "input": {"bootstrap_servers": broker.bootstrap, "topics": [topic]},
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "key": ["id"],
        "columns": {"id": "int", "name": "string", "age": "int"},
        "output_table": {"url": db, "table": "users"},
        "snapshot_path": str(tmp_path / "users.parquet"),
    }

    def send(i: int, value: str | None) -> None:
        produce(broker.bootstrap, topic, [(json.dumps({"id": i}), value)], partition=i % 2)

    send(1, _event("c", None, _u(1, "ann", 30)))
    send(2, _event("c", None, _u(2, "bob", 40), envelope=True))
    send(1, _event("u", _u(1, "ann", 30), _u(1, "ann", 31)))
    send(2, _event("d", _u(2, "bob", 40), None))
    send(2, None)  # Debezium's tombstone after a delete
    send(3, _event("c", None, _u(3, "cy", 20)))
    send(4, _event("r", None, _u(4, "di", 50), envelope=True))
    run_once("cdc_to_table", config)
    state = {1: ("ann", 31), 3: ("cy", 20), 4: ("di", 50)}
    assert _table(db) == state == _snapshot(tmp_path / "users.parquet")

    send(3, _event("u", _u(3, "cy", 20), _u(3, "cy", 21)))
    send(1, _event("d", _u(1, "ann", 31), None))
    send(2, _event("c", None, _u(2, "bob", 41)))
    run_once("cdc_to_table", config)
    state = {2: ("bob", 41), 3: ("cy", 21), 4: ("di", 50)}
    assert _table(db) == state == _snapshot(tmp_path / "users.parquet")


def _table(db: str) -> dict:
    with sa.create_engine(db).connect() as conn:
        rows = conn.execute(sa.text("select id, name, age from users")).all()
    return {r[0]: (r[1], r[2]) for r in rows}


def _snapshot(path) -> dict:
    import pyarrow.parquet as pq

    return {r["id"]: (r["name"], r["age"]) for r in pq.read_table(path).to_pylist()}
