"""Starts Spark for a pipeline and runs a template's streaming queries to completion.

``build_session`` is the one place that knows how Sluice wants Spark: the ``sluice`` data source
registered, Python workers on this interpreter (``PYSPARK_PYTHON``; executors on a cluster must
have the ``sluice`` package installed in the Python they run), Arrow on, and as many shuffle
partitions as a local master has cores (``shuffle_partitions``). ``run`` drives the
queries a template starts: ``once=True`` uses the availableNow trigger (process what is in the
topics now, in as many micro-batches as limits require, then stop) — a batch job with the
streaming checkpoint, so the next run continues where this one stopped.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
CLUSTER_SHUFFLE_PARTITIONS = 8
_LOCAL = re.compile(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?")


def shuffle_partitions(master: str) -> int:
    """The default ``spark.sql.shuffle.partitions`` for ``master``.

    Each shuffle partition of a stateful query (windowed counts, dedupe, latest row per key) is
    a state store with its own files per micro-batch, and a task in every batch, the no-data
    batches included; on a local master more partitions than cores only queue those tasks.
    ``local[N]`` (and ``local[N,F]``) -> N, ``local[*]`` -> the machine's cores, ``local`` -> 1;
    any other master -> 8. A query restarted from a checkpoint keeps the number it was started
    with (Spark records it in the checkpoint's offset log), so changing this never breaks one.
    """
    m = _LOCAL.fullmatch(master.strip())
    if m is None:
        return CLUSTER_SHUFFLE_PARTITIONS
    cores = m.group(1)
    if cores is None:
        return 1
    if cores == "*":
        return os.cpu_count() or 1
    return max(1, int(cores))


def build_session(
    master: str = DEFAULT_MASTER,
    *,
    app_name: str = "sluice",
    extra: Mapping[str, str] | None = None,
) -> Any:
    """A SparkSession (the active one if it exists) with the ``sluice`` data source registered."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from spark_pipelines.datasource.source import register

    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(shuffle_partitions(master)),
        "spark.sql.streaming.noDataMicroBatches.enabled": "true",
        # A Python worker that imports pyspark on a busy machine can need more than the 15 s
        # default to connect back; the query then fails with "failed to connect back".
        "spark.python.authenticate.socketTimeout": "120s",
    }
    settings.update(extra or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register(spark)
    return spark


@dataclass
class RunResult:
    """What a run did: per query, its name, batches and the last progress (as a dict)."""

    queries: list[dict[str, Any]] = field(default_factory=list)
    rows: int = 0
    seconds: float = 0.0


def run(
    start: Callable[[Any, Callable[[Any], Any]], list[Any]],
    spark: Any,
    *,
    once: bool,
    trigger_interval: str = "10 seconds",
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    timeout_s: float | None = None,
) -> RunResult:
    """Starts the template's queries (``start(spark, configure)``) and waits for them.

    ``configure`` applies the trigger to each ``DataStreamWriter``; the template calls it before
    ``.start()``. Continuous runs end when any query stops or fails (its exception propagates)
    or after ``timeout_s``.
    """

    def configure(writer: Any) -> Any:
        if once:
            return writer.trigger(availableNow=True)
        return writer.trigger(processingTime=trigger_interval)

    began = time.monotonic()
    queries = start(spark, configure)
    result = RunResult()
    try:
        _wait(queries, once=once, on_progress=on_progress, timeout_s=timeout_s)
    finally:
        for q in queries:
            if q.isActive:
                q.stop()
    result.seconds = time.monotonic() - began
    for q in queries:
        progress = q.recentProgress
        rows = sum(int(_as_dict(p).get("numInputRows", 0)) for p in progress)
        result.rows += rows
        last = _as_dict(progress[-1]) if progress else {}
        result.queries.append(
            {"name": q.name, "id": str(q.id), "rows": rows, "last_progress": last}
        )
    return result


def _as_dict(progress: Any) -> dict[str, Any]:
    import json

    return json.loads(progress.json) if hasattr(progress, "json") else dict(progress)


def _wait(
    queries: list[Any],
    *,
    once: bool,
    on_progress: Callable[[dict[str, Any]], None] | None,
    timeout_s: float | None,
) -> None:
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    seen: dict[str, int] = {}
    while True:
        for q in queries:
            if on_progress is not None:
                recent = q.recentProgress
                for p in recent[seen.get(str(q.id), 0) :]:
                    on_progress(_as_dict(p))
                seen[str(q.id)] = len(recent)
            if not q.isActive and q.exception() is not None:
                raise RuntimeError(f"query {q.name} failed: {q.exception()}")
        active = [q for q in queries if q.isActive]
        if not active or (not once and len(active) < len(queries)):
            return
        if deadline is not None and time.monotonic() > deadline:
            return
        active[0].awaitTermination(0.5)
