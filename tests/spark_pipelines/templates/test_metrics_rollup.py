from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from tests.spark_pipelines._kafka import create_topic, produce, read_all

pytest.importorskip("pyspark")
pytestmark = pytest.mark.timeout(600)


def _m(name: str, tags: dict, value: float, t: str) -> str:
    return json.dumps({"name": name, "tags": tags, "value": value, "time": f"2026-01-01T{t}Z"})


def test_minute_and_hour_rollups_to_topic_and_table(run_once, broker, topic_name, tmp_path):
    raw, out = f"{topic_name}-metrics", f"{topic_name}-rollups"
    create_topic(broker.bootstrap, raw, 2)
    a, b = {"host": "a"}, {"host": "b", "dc": "x"}
    lines = [_m("cpu", a, v, f"10:00:{10 + v:02d}") for v in (1, 2, 3, 4)]
    lines += [_m("cpu", b, v, "10:00:30") for v in (10, 20)]
    lines += [_m("cpu", a, 100, "10:01:05"), "garbage", _m("cpu", a, 5, "not a time")]
    for i, line in enumerate(lines):
        produce(broker.bootstrap, raw, [(None, line)], partition=i % 2)
    produce(broker.bootstrap, raw, [(None, _m("tick", {}, 0, "12:00:00"))])  # closes the windows
    db = f"sqlite:///{tmp_path / 'wh.db'}"
    config = {
        "input": {"bootstrap_servers": broker.bootstrap, "topics": [raw]},
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "output_topic": out,
        "output_table": {"url": db, "table": "rollups"},
    }
    run_once("metrics_rollup", config)

    ta, tb = '{"host":"a"}', '{"dc":"x","host":"b"}'
    expected = {
        ("cpu", ta, "1 minute", "10:00"): (4, 1.0, 4.0, 2.5, 2.0, 4.0),
        ("cpu", tb, "1 minute", "10:00"): (2, 10.0, 20.0, 15.0, 10.0, 20.0),
        ("cpu", ta, "1 minute", "10:01"): (1, 100.0, 100.0, 100.0, 100.0, 100.0),
        ("cpu", ta, "1 hour", "10:00"): (5, 1.0, 100.0, 22.0, 3.0, 100.0),
        ("cpu", tb, "1 hour", "10:00"): (2, 10.0, 20.0, 15.0, 10.0, 20.0),
    }
    with sa.create_engine(db).connect() as conn:
        rows = conn.execute(sa.text("select * from rollups")).mappings().all()
    got = {
        (r["name"], r["tags"], r["window"], str(r["window_start"])[11:16]): (
            r["count"],
            r["min"],
            r["max"],
            r["avg"],
            r["p50"],
            r["p95"],
        )
        for r in rows
    }
    assert got == expected and len(rows) == len(expected)

    records = read_all(broker.bootstrap, out)
    by_key = {k.decode(): json.loads(v) for _p, _o, k, v, _h in records}
    assert len(by_key) == len(expected)
    hour_a = by_key[f"cpu|{ta}|1 hour|2026-01-01 10:00:00"]
    assert (hour_a["count"], hour_a["max"], hour_a["p95"]) == (5, 100.0, 100.0)
