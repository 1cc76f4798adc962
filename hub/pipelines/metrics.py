"""Pipeline metrics for Prometheus (``GET /metrics`` on the hub): the latest run of each.

A run's progress file holds Spark's ``StreamingQueryProgress`` of every micro-batch, one JSON
line each (``sluice pipelines run --progress-file``). They are read incrementally: each scrape
reads only the lines appended since the previous one and adds them to the run's totals, so a
long streaming run's file is never read twice. Input lag is Spark's own view of its sources:
the latest available offset minus the batch's end offset, summed over topic partitions.

All series carry ``pipeline`` and ``run`` (the latest run's id), so a new run starts new
series and its rows are not added to the previous run's.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

_P = "sluice_pipeline_"


class _RunProgress:
    """Totals of one run's progress file, read up to ``position``."""

    def __init__(self) -> None:
        self.position = 0
        self.rows_in = 0
        self.rows_out = 0
        self.batches = 0
        self.last: dict[str, Any] | None = None

    def read(self, path: Path) -> None:
        try:
            with path.open("rb") as f:
                f.seek(self.position)
                data = f.read()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        for line in data[:end].splitlines():
            try:
                progress = json.loads(line)
            except ValueError:
                continue
            if isinstance(progress, dict) and "batchId" in progress:
                self._add(progress)
        self.position += end

    def _add(self, p: dict[str, Any]) -> None:
        self.batches += 1
        self.rows_in += int(p.get("numInputRows") or 0)
        out = (p.get("sink") or {}).get("numOutputRows", -1)
        if isinstance(out, int) and out > 0:
            self.rows_out += out
        self.last = p


def _offsets(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def input_lag(progress: dict[str, Any]) -> int:
    """Records available but not yet in a batch: Σ (latestOffset - endOffset) per partition."""
    lag = 0
    for source in progress.get("sources") or ():
        end, latest = _offsets(source.get("endOffset")), _offsets(source.get("latestOffset"))
        for topic, parts in latest.items():
            done = end.get(topic)
            if not isinstance(parts, dict) or not isinstance(done, dict):
                continue
            for partition, high in parts.items():
                low = done.get(partition, high)
                if isinstance(high, int) and isinstance(low, int) and high > low:
                    lag += high - low
    return lag


def _timestamp(progress: dict[str, Any]) -> float | None:
    raw = progress.get("timestamp")
    if not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class PipelinesCollector(Collector):
    """Per pipeline: running, the latest run's rows, batch duration, input lag, progress time."""

    def __init__(self, service: Any) -> None:
        self._service = service
        self._lock = threading.Lock()  # concurrent scrapes share the incremental readers
        self._runs: dict[tuple[str, str], _RunProgress] = {}

    def collect(self) -> Iterator[Metric]:
        labels = ["pipeline", "run"]
        fams = {
            "running": GaugeMetricFamily(
                _P + "running", "1 while a run is in progress.", labels=["pipeline"]
            ),
            "in": GaugeMetricFamily(_P + "run_input_rows", "Rows the run read.", labels=labels),
            "out": GaugeMetricFamily(
                _P + "run_output_rows", "Rows the run wrote (sinks that report it).", labels=labels
            ),
            "batches": GaugeMetricFamily(
                _P + "run_batches", "Micro-batches the run completed.", labels=labels
            ),
            "duration": GaugeMetricFamily(
                _P + "batch_duration_ms", "The last micro-batch's duration (ms).", labels=labels
            ),
            "lag": GaugeMetricFamily(
                _P + "input_lag_records",
                "Records available to the run but not yet read.",
                labels=labels,
            ),
            "progress": GaugeMetricFamily(
                _P + "last_progress_timestamp_seconds",
                "When the run last completed a micro-batch.",
                labels=labels,
            ),
            "started": GaugeMetricFamily(
                _P + "run_start_timestamp_seconds", "When the run started.", labels=labels
            ),
            "failed": GaugeMetricFamily(
                _P + "run_failed", "1 if the run ended FAILED.", labels=labels
            ),
        }
        with self._lock:
            for name in sorted(self._service.pipelines):
                self._pipeline(name, fams)
        yield from fams.values()

    def _pipeline(self, name: str, fams: dict[str, GaugeMetricFamily]) -> None:
        runs = self._service.runs(name)
        run = runs[-1] if runs else None
        running = run is not None and run.get("state") == "RUNNING"
        fams["running"].add_metric([name], 1 if running else 0)
        if run is None:
            return
        key = (name, str(run["id"]))
        progress = self._runs.get(key)
        if progress is None:
            self._runs = {k: v for k, v in self._runs.items() if k[0] != name}
            progress = self._runs[key] = _RunProgress()
        progress.read(Path(self._service.dir) / name / f"{run['id']}.progress")
        labels = list(key)
        fams["in"].add_metric(labels, progress.rows_in)
        fams["out"].add_metric(labels, progress.rows_out)
        fams["batches"].add_metric(labels, progress.batches)
        fams["started"].add_metric(labels, float(run.get("started") or 0))
        fams["failed"].add_metric(labels, 1 if run.get("state") == "FAILED" else 0)
        last = progress.last
        if last is not None:
            duration = (last.get("durationMs") or {}).get("triggerExecution")
            if isinstance(duration, int | float):
                fams["duration"].add_metric(labels, duration)
            fams["lag"].add_metric(labels, input_lag(last))
            when = _timestamp(last)
            if when is not None:
                fams["progress"].add_metric(labels, when)
