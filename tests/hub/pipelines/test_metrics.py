"""Pipeline metrics from a real ``PipelinesService`` run: the run's process (here a stand-in
for ``sluice pipelines run`` that writes Spark-shaped progress lines, as the real one does
with ``--progress-file``) and the collector reading what it wrote, incrementally."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest

import spark_pipelines.templates as templates
from hub.pipelines import PipelinesService
from hub.pipelines.metrics import PipelinesCollector, input_lag
from tests.fixtures.broker import wait_until
from tests.fixtures.prometheus import Samples, parse, value

CONFIG = {
    "input": {"bootstrap_servers": "127.0.0.1:9", "topics": ["raw"]},
    "checkpoint_dir": "/tmp/ck",
    "output_topic": "counts",
}


def _progress(batch: int, rows: int, end: int, latest: int, at: str) -> dict[str, object]:
    """One micro-batch as Spark's StreamingQueryProgress JSON (offsets as JSON strings)."""
    return {
        "batchId": batch, "timestamp": at, "numInputRows": rows,
        "durationMs": {"triggerExecution": 100 + batch},
        "sources": [{"description": "sluice", "endOffset": json.dumps({"raw": {"0": end}}),
                     "latestOffset": json.dumps({"raw": {"0": latest}}), "numInputRows": rows}],
        "sink": {"description": "kafka", "numOutputRows": rows},
    }  # fmt: skip


RUN = """#!{python}
import json, os, sys, time
path = sys.argv[sys.argv.index("--progress-file") + 1]
go = os.path.join(os.path.dirname(path), "go")
with open(path, "a") as f:
    f.write(json.dumps({first}) + "\\n")
deadline = time.monotonic() + 30
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.01)
with open(path, "a") as f:
    f.write(json.dumps({second}) + "\\n")
    f.write(json.dumps({{"summary": {{"rows": 25, "seconds": 1.0}}}}) + "\\n")
"""


@pytest.fixture(autouse=True)
def _tmp_allowed(allowed_roots: Callable[..., None]) -> None:
    allowed_roots("/tmp")


def _scrape(service: PipelinesService, collector: PipelinesCollector) -> Samples:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return parse(generate_latest(registry).decode())


def test_run_rows_lag_and_progress_time(tmp_path: Path) -> None:
    first = _progress(0, 10, end=10, latest=12, at="2026-11-26T00:00:00.000Z")
    second = _progress(1, 15, end=25, latest=30, at="2026-11-26T00:00:05.500Z")
    script = tmp_path / "fake-python"
    script.write_text(RUN.format(python=sys.executable, first=repr(first), second=repr(second)))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    home = tmp_path / "pipelines"
    service = PipelinesService(home, templates, BackgroundScheduler(timezone="UTC"),
                               python=str(script))  # fmt: skip
    service.create("agg", "log_aggregation", CONFIG)
    collector = PipelinesCollector(service)
    assert value(_scrape(service, collector), "sluice_pipeline_running", pipeline="agg") == 0

    run = service.run_now("agg")
    labels = {"pipeline": "agg", "run": run.id}
    rows_in = "sluice_pipeline_run_input_rows"
    wait_until(lambda: value(_scrape(service, collector), rows_in, **labels) == 10, 20, "batch 0")
    samples = _scrape(service, collector)
    assert value(samples, "sluice_pipeline_running", pipeline="agg") == 1
    assert value(samples, "sluice_pipeline_input_lag_records", **labels) == 2

    (home / "agg" / "go").touch()
    wait_until(lambda: service.runs("agg")[-1]["state"] == "SUCCEEDED", 20, "run to finish")
    samples = _scrape(service, collector)
    assert value(samples, "sluice_pipeline_running", pipeline="agg") == 0
    assert value(samples, rows_in, **labels) == 25
    assert value(samples, "sluice_pipeline_run_output_rows", **labels) == 25
    assert value(samples, "sluice_pipeline_run_batches", **labels) == 2
    assert value(samples, "sluice_pipeline_batch_duration_ms", **labels) == 101
    assert value(samples, "sluice_pipeline_input_lag_records", **labels) == 5
    last = value(samples, "sluice_pipeline_last_progress_timestamp_seconds", **labels)
    assert last == datetime(2026, 11, 26, 0, 0, 5, 500_000, tzinfo=UTC).timestamp()
    assert value(samples, "sluice_pipeline_run_failed", **labels) == 0
    # read again: totals are not added twice
    assert value(_scrape(service, collector), rows_in, **labels) == 25


def test_input_lag_ignores_what_it_cannot_read() -> None:
    assert input_lag({"sources": [{"endOffset": "not json", "latestOffset": None}]}) == 0
    assert input_lag({"sources": [{"endOffset": {"t": {"0": 5, "1": 7}},
                                   "latestOffset": {"t": {"0": 9, "1": 7}}}]}) == 4  # fmt: skip
