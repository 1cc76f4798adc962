from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from tests.spark_pipelines._kafka import create_topic, produce

pytest.importorskip("pyspark")
pytestmark = pytest.mark.timeout(600)


def test_sql_aggregate_upserted_into_a_table(run_once, broker, topic_name, tmp_path):
    clicks = f"{topic_name}-clicks"
    create_topic(broker.bootstrap, clicks, 2)
    users = ["u1"] * 3 + ["u2"] * 2 + ["u3"]
    for i, u in enumerate(users):
        produce(
            broker.bootstrap, clicks, [(u, json.dumps({"user": u, "page": i}))], partition=i % 2
        )
    db = f"sqlite:///{tmp_path / 'wh.db'}"
    config = {
        "views": {
            "clicks": {
                "input": {"bootstrap_servers": broker.bootstrap, "topics": [clicks]},
                "json_schema": "user string, page int",
            }
        },
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "statement": "SELECT v.user AS user, count(*) AS clicks FROM clicks GROUP BY v.user",
        "output_mode": "update",
        "output_table": {"url": db, "table": "clicks_per_user"},
        "table_key": ["user"],
    }
    run_once("sql", config)
    produce(broker.bootstrap, clicks, [("u3", json.dumps({"user": "u3", "page": 9}))])
    run_once("sql", config)  # the next run continues: state and offsets from the checkpoint
    with sa.create_engine(db).connect() as conn:
        rows = dict(conn.execute(sa.text("select user, clicks from clicks_per_user")).all())
    assert rows == {"u1": 3, "u2": 2, "u3": 2}
