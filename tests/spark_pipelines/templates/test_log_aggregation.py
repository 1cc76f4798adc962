from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.spark_pipelines._kafka import create_topic, produce, read_all

# Spark start-up on a busy 2-core machine takes up to ~90 s of the first test's budget.
pytestmark = pytest.mark.timeout(600)

pytest.importorskip("pyspark")


def _line(t: str, level: str, service: str) -> str:
    return json.dumps(
        {
            "time": f"2026-01-01T{t}Z",
            "level": level,
            "service": service,
            "host": "h1",
            "message": "m",
        }
    )


def assert_counts(
    bootstrap: str, topic: str, parquet: Path, expected: dict[tuple[str, str, str], int]
) -> None:
    """The output topic holds exactly ``expected`` ((window start, level, service) -> count),
    one record per window, and the Parquet output the same counts."""
    records = read_all(bootstrap, topic)
    got = {tuple(k.decode().split("|")): json.loads(v)["count"] for _p, _o, k, v, _h in records}
    assert got == expected and len(records) == len(expected)

    import pyarrow.parquet as pq

    table = pq.read_table(parquet).to_pylist()
    assert sorted(
        (r["window_start"].strftime("%H:%M"), r["level"], r["service"], r["count"]) for r in table
    ) == sorted((k[0][11:16], k[1], k[2], n) for k, n in expected.items())


def test_counts_per_window_level_service(run_once, broker, topic_name, tmp_path):
    raw, out = f"{topic_name}-raw", f"{topic_name}-counts"
    create_topic(broker.bootstrap, raw, 2)
    lines = (
        [_line("10:00:05", "ERROR", "api")] * 3
        + [_line("10:00:30", "INFO", "api")] * 2
        + [_line("10:00:59", "INFO", "web")]
        + [_line("10:01:10", "ERROR", "api")]
        + [_line("10:01:20", "INFO", "web")] * 4
        + ["not json", json.dumps({"time": "yesterday", "level": "INFO"})]
    )
    for i, line in enumerate(lines):
        produce(broker.bootstrap, raw, [(None, line)], partition=i % 2)
    # A late line moves the watermark (10 minutes) past both windows, which closes them.
    produce(broker.bootstrap, raw, [(None, _line("10:30:00", "INFO", "api"))], partition=0)
    config = {
        "input": {"bootstrap_servers": broker.bootstrap, "topics": [raw]},
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "output_topic": out,
        "output_path": str(tmp_path / "parquet"),
    }
    result = run_once("log_aggregation", config)
    assert result.rows == 2 * len(lines) + 2  # both queries read every line

    expected = {
        ("2026-01-01T10:00:00Z", "ERROR", "api"): 3,
        ("2026-01-01T10:00:00Z", "INFO", "api"): 2,
        ("2026-01-01T10:00:00Z", "INFO", "web"): 1,
        ("2026-01-01T10:01:00Z", "ERROR", "api"): 1,
        ("2026-01-01T10:01:00Z", "INFO", "web"): 4,
    }
    assert_counts(broker.bootstrap, out, tmp_path / "parquet", expected)


def test_regex_format(spark):
    from spark_pipelines.templates.log_aggregation import Config, parse

    cfg = Config.model_validate(
        {
            "input": {"bootstrap_servers": "x", "topics": ["t"]},
            "checkpoint_dir": "/tmp/x",
            "output_topic": "o",
            "format": "regex",
            "regex": r"^(?P<time>\S+) \[(?P<level>\w+)\] (?P<service>\w+)@(?P<host>\S+): "
            r"(?P<message>.*)$",
        }
    )
    df = spark.createDataFrame(
        [(b"2026-01-01T10:00:05Z [WARN] api@h7: disk 91% full",), (b"garbage",)],
        "value binary",
    )
    rows = [r.asDict() for r in parse(df, cfg).collect()]
    assert len(rows) == 1
    assert (rows[0]["level"], rows[0]["service"], rows[0]["host"], rows[0]["message"]) == (
        "WARN",
        "api",
        "h7",
        "disk 91% full",
    )


def _shuffle_partitions_in(checkpoint) -> set[str]:
    """``spark.sql.shuffle.partitions`` as each offset-log entry of ``checkpoint`` records it."""
    found = set()
    for entry in (checkpoint / "offsets").iterdir():
        if entry.name.isdigit():
            metadata = json.loads(entry.read_text().splitlines()[1])
            found.add(metadata["conf"]["spark.sql.shuffle.partitions"])
    return found


@pytest.mark.slow  # a second Spark run from a checkpoint (~18 s); suite budget
def test_restart_keeps_the_shuffle_partitions_of_its_checkpoint(
    spark, run_once, broker, topic_name, tmp_path
):
    """A checkpoint started with the old default (8) continues with 8 state partitions.

    The runner's default now follows a local master's cores; a restart must neither lose the
    open windows' state (kept in 8 state stores) nor repeat or skip a window.
    """
    raw, out = f"{topic_name}-raw", f"{topic_name}-counts"
    create_topic(broker.bootstrap, raw, 2)
    config = {
        "input": {"bootstrap_servers": broker.bootstrap, "topics": [raw]},
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "output_topic": out,
        "output_path": str(tmp_path / "parquet"),
    }

    def send(lines: list[str]) -> None:
        for i, line in enumerate(lines):
            produce(broker.bootstrap, raw, [(None, line)], partition=i % 2)

    previous = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        spark.conf.set("spark.sql.shuffle.partitions", "8")
        # 10:30:00 closes 10:00 and 10:01 and opens 10:30, which stays open in the state.
        send(
            [_line("10:00:05", "ERROR", "api")] * 3
            + [_line("10:01:10", "INFO", "web")] * 2
            + [_line("10:30:00", "INFO", "api")]
        )
        assert run_once("log_aggregation", config).rows == 2 * 6
        spark.conf.set("spark.sql.shuffle.partitions", "1")
        send(
            [_line("10:30:20", "INFO", "api")] * 2
            + [_line("10:31:00", "WARN", "auth")]
            + [_line("11:00:00", "INFO", "api")]
        )
        assert run_once("log_aggregation", config).rows == 2 * 4
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)

    expected = {
        ("2026-01-01T10:00:00Z", "ERROR", "api"): 3,
        ("2026-01-01T10:01:00Z", "INFO", "web"): 2,
        ("2026-01-01T10:30:00Z", "INFO", "api"): 3,  # one line from each run
        ("2026-01-01T10:31:00Z", "WARN", "auth"): 1,
    }
    assert_counts(broker.bootstrap, out, tmp_path / "parquet", expected)
    for query in ("topic", "parquet"):
        checkpoint = tmp_path / "ckpt" / query
        assert _shuffle_partitions_in(checkpoint) == {"8"}
        stores = {p.name for p in (checkpoint / "state" / "0").iterdir() if p.name.isdigit()}
        assert stores == {str(i) for i in range(8)}
