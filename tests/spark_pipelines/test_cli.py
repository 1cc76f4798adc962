"""``sluice pipelines list|describe|run``: the fast paths in-process, a real run as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spark_pipelines.cli import pipelines_app
from tests.spark_pipelines._kafka import create_topic, produce, read_all

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_list_and_describe():
    listed = runner.invoke(pipelines_app, ["list"])
    assert listed.exit_code == 0
    for name in ("log_aggregation", "metrics_rollup", "cdc_to_table", "clean_dedupe_enrich", "sql"):
        assert name in listed.output
    described = runner.invoke(pipelines_app, ["describe", "cdc_to_table"])
    assert described.exit_code == 0 and '"snapshot_path"' in described.output
    assert runner.invoke(pipelines_app, ["describe", "nope"]).exit_code == 2


def test_run_rejects_an_invalid_config_before_starting_spark(tmp_path: Path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"input": {"bootstrap_servers": "x", "topics": ["t"]}}))
    result = runner.invoke(pipelines_app, ["run", "log_aggregation", "--config", str(cfg)])
    assert result.exit_code == 2 and "checkpoint_dir" in result.output


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_run_once_as_a_subprocess(broker, topic_name, tmp_path: Path):
    src, dst = f"{topic_name}-in", f"{topic_name}-out"
    create_topic(broker.bootstrap, src, 1)
    produce(broker.bootstrap, src, [(None, f"keep-{i}") for i in range(5)] + [(None, "drop")])
    cfg = tmp_path / "sql.json"
    cfg.write_text(
        json.dumps(
            {
                "views": {
                    "events": {"input": {"bootstrap_servers": broker.bootstrap, "topics": [src]}}
                },
                "checkpoint_dir": str(tmp_path / "ckpt"),
                "statement": "SELECT upper(value_str) AS value FROM events"
                " WHERE value_str LIKE 'keep%'",
                "output_topic": dst,
            }
        )
    )
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sluice",
            "pipelines",
            "run",
            "sql",
            "--config",
            str(cfg),
            "--master",
            "local[1]",
            "--once",
            "--progress-file",
            str(tmp_path / "progress.jsonl"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=500,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "6 input rows" in done.stdout
    # Spark's real progress lines drive the bar: 6 rows, 6 offsets, of 6 available
    from sluice.terminal import Tracker
    from spark_pipelines.cli import BatchProgress

    bar = Tracker("sql", None, enabled=False, unit="rows")
    batches = BatchProgress("sql", bar, once=True)
    for line in (tmp_path / "progress.jsonl").read_text().splitlines():
        if "summary" not in line:
            batches.update(json.loads(line))
    assert (bar.completed, bar.items, bar.total) == (6, 6, 6)
    assert sorted(v for *_, v, _h in read_all(broker.bootstrap, dst)) == [
        f"KEEP-{i}".encode() for i in range(5)
    ]


def test_batch_progress_counts_rows_and_offsets_against_the_available_end():
    from sluice.terminal import Tracker
    from spark_pipelines.cli import BatchProgress

    bar = Tracker("logs", None, enabled=False, unit="rows")
    batches = BatchProgress("logs", bar, once=True)

    def progress(batch: int, start: dict | None, end: dict, rows: int) -> dict:
        # StreamingQueryProgress.json as Spark writes it for the sluice source: offsets as JSON
        source = {
            "description": "sluice",
            "startOffset": json.dumps(start) if start is not None else None,
            "endOffset": json.dumps(end),
            "latestOffset": json.dumps({"raw": {"0": 300, "1": 100}}),
            "numInputRows": rows,
        }
        return {"id": "q1", "batchId": batch, "numInputRows": rows, "sources": [source]}

    batches.update(progress(0, {"raw": {"0": 0, "1": 0}}, {"raw": {"0": 100, "1": 50}}, 150))
    assert (bar.completed, bar.items, bar.total) == (150, 150, 400)
    assert bar.description == "logs batch 0: 150 rows, 150 offsets"
    batches.update(progress(1, {"raw": {"0": 100, "1": 50}}, {"raw": {"0": 300, "1": 100}}, 240))
    assert (bar.completed, bar.items) == (400, 390)  # 10 offsets were compacted away
    batches.update(progress(2, {"raw": {"0": 300, "1": 100}}, {"raw": {"0": 300, "1": 100}}, 0))
    assert bar.completed == 400 and bar.description.startswith("logs batch 2: 0 rows")
