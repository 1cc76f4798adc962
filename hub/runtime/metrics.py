"""Kafka Connect's metrics of one worker, as Prometheus families (``GET /metrics``).

Names are Connect's MBean groups and attributes as the common JMX exporter rules render them:
``kafka.connect:type=source-task-metrics,connector=c,task=0`` attribute
``source-record-poll-total`` -> ``kafka_connect_source_task_metrics_source_record_poll_total
{connector="c",task="0"}``; connector and task status are one series per connector/task whose
``status`` label is the state (lower case), value 1, as those rules render them. Connect's
windowed ``-rate`` attributes are left to Prometheus (``rate()`` of the ``_total`` counters).

Everything is read when Prometheus asks: statuses from the status store, counters from the
tasks running on this worker (``TaskMetrics``, written by each task's thread), and each
task's own ``metrics()`` (connector-specific values such as CDC replication lag), so an idle
scrape interval costs the tasks nothing. A connector-specific metric a task reports under
``name`` is exported as ``sluice_connector_task_<name>``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hub.runtime.errors import NotFoundError
from hub.runtime.task_metrics import TaskMetrics
from hub.runtime.worker_task import ConnectorTaskId

log = logging.getLogger(__name__)

_TASK = ["connector", "task"]
_SOURCE = "kafka_connect_source_task_metrics_"
_SINK = "kafka_connect_sink_task_metrics_"
_COMMON = "kafka_connect_connector_task_metrics_"
_ERRORS = "kafka_connect_task_error_metrics_"
_WORKER = "kafka_connect_connect_worker_metrics_"
_REBALANCE = "kafka_connect_connect_worker_rebalance_metrics_"
_CUSTOM = "sluice_connector_task_"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _avg(total: float, count: int) -> float:
    return total / count if count else 0.0


class _Families:
    """Families by name, created on first use, yielded in creation order."""

    def __init__(self) -> None:
        self._by_name: dict[str, Metric] = {}

    def add(
        self, kind: Callable[..., Metric], name: str, doc: str, labels: list[str],
        values: list[str], value: float,
    ) -> None:  # fmt: skip
        family = self._by_name.get(name)
        if family is None:
            family = self._by_name[name] = kind(name, doc, labels=labels)
        family.add_metric(values, value)  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._by_name.values())


class HubCollector(Collector):
    """Connector and task status, worker counts, task, sink/source and error metrics."""

    def __init__(self, herder: Any) -> None:
        self._herder = herder

    def collect(self) -> Iterator[Metric]:
        herder = self._herder
        f = _Families()
        connectors = sorted(herder.connectors())
        status_counts: dict[str, int] = {}
        for name in connectors:
            try:
                status = herder.connector_status(name)
            except NotFoundError:  # deleted between the listing and now
                continue
            kind = status.get("type", "unknown")
            state = str(status["connector"]["state"]).lower()
            f.add(GaugeMetricFamily, "kafka_connect_connector_status",
                  "The connector's state (label status), value 1.",
                  ["connector", "status", "type"], [name, state, kind], 1)  # fmt: skip
            counts = dict.fromkeys(("running", "paused", "failed", "unassigned"), 0)
            for task in status["tasks"]:
                task_state = str(task["state"]).lower()
                counts[task_state] = counts.get(task_state, 0) + 1
                status_counts[task_state] = status_counts.get(task_state, 0) + 1
                f.add(GaugeMetricFamily, "kafka_connect_connector_task_status",
                      "The task's state (label status), value 1.",
                      ["connector", "task", "status"], [name, str(task["id"]), task_state],
                      1)  # fmt: skip
            for task_state, count in counts.items():
                f.add(GaugeMetricFamily, f"{_WORKER}connector_{task_state}_task_count",
                      f"Tasks of the connector in state {task_state}.",
                      ["connector"], [name], count)  # fmt: skip
            self._tasks(f, name, kind)
        yield GaugeMetricFamily(_WORKER + "connector_count", "Connectors.", value=len(connectors))
        yield GaugeMetricFamily(
            _WORKER + "task_count", "Tasks of every connector.", value=sum(status_counts.values())
        )
        yield from f
        yield from _rebalance_families(getattr(herder, "rebalance_stats", None))

    def _tasks(self, f: _Families, name: str, kind: str) -> None:
        worker = getattr(self._herder, "worker", None)  # a herder embedding may run no tasks
        if worker is None:
            return
        for task_id in worker.task_ids(name):
            task = worker.task(task_id)
            if task is None:
                continue
            self._task(f, task_id, kind, task)

    def _task(self, f: _Families, task_id: ConnectorTaskId, kind: str, task: Any) -> None:
        m: TaskMetrics = task.metrics
        labels = [task_id.connector, str(task_id.task)]

        def gauge(name: str, doc: str, value: float) -> None:
            f.add(GaugeMetricFamily, name, doc, _TASK, labels, value)

        def counter(name: str, doc: str, value: float) -> None:
            f.add(CounterMetricFamily, name, doc, _TASK, labels, value)

        if kind == "source":
            counter(_SOURCE + "source_record_poll", "Records the task's poll() returned.",
                    m.source_record_poll)  # fmt: skip
            counter(_SOURCE + "source_record_write",
                    "Records produced after transforms (filtered ones are not).",
                    m.source_record_write)  # fmt: skip
            gauge(_SOURCE + "poll_batch_avg_time_ms", "Mean time of a poll() with records.",
                  _avg(m.poll_batch_total_ms, m.batch_count))  # fmt: skip
            gauge(_SOURCE + "poll_batch_max_time_ms", "Longest poll() with records.",
                  m.poll_batch_max_ms)  # fmt: skip
        elif kind == "sink":
            counter(_SINK + "sink_record_read", "Records the consumer returned.",
                    m.sink_record_read)  # fmt: skip
            counter(_SINK + "sink_record_send", "Records put() accepted.", m.sink_record_send)
            gauge(_SINK + "put_batch_avg_time_ms", "Mean time of a put() with records.",
                  _avg(m.put_batch_total_ms, m.batch_count))  # fmt: skip
            gauge(_SINK + "put_batch_max_time_ms", "Longest put().", m.put_batch_max_ms)
            gauge(_SINK + "partition_count", "Topic partitions assigned to the task.",
                  len(getattr(task, "assignment", ())))  # fmt: skip
        commits = m.offset_commit_success + m.offset_commit_failure
        counter(_COMMON + "offset_commit_success", "Offset commits that succeeded.",
                m.offset_commit_success)  # fmt: skip
        counter(_COMMON + "offset_commit_failure", "Offset commits that failed.",
                m.offset_commit_failure)  # fmt: skip
        gauge(_COMMON + "offset_commit_avg_time_ms", "Mean offset commit time.",
              _avg(m.offset_commit_total_ms, commits))  # fmt: skip
        gauge(_COMMON + "offset_commit_max_time_ms", "Longest offset commit.",
              m.offset_commit_max_ms)  # fmt: skip
        gauge(_COMMON + "batch_size_avg", "Mean records per poll result / put batch.",
              _avg(m.batch_records, m.batch_count))  # fmt: skip
        gauge(_COMMON + "batch_size_max", "Most records in one poll result / put batch.",
              m.batch_size_max)  # fmt: skip
        errors = getattr(task, "errors", None)
        if errors is not None:
            for attr, name, doc in (
                ("failures", "total_record_errors", "Records that failed and were tolerated."),
                ("failures", "total_records_skipped", "Records skipped after tolerated errors."),
                ("retries", "total_retries", "Retries of failed record operations."),
                ("errors_logged", "total_errors_logged", "Record errors logged."),
                ("dlq_requests", "deadletterqueue_produce_requests", "Records sent to the DLQ."),
                ("dlq_failures", "deadletterqueue_produce_failures", "DLQ writes that failed."),
            ):
                gauge(_ERRORS + name, doc, getattr(errors, attr, 0))
        self._custom(f, task_id, task, labels)

    def _custom(self, f: _Families, task_id: ConnectorTaskId, task: Any, labels: list[str]) -> None:
        """The connector's own ``SourceTask.metrics()`` / ``SinkTask.metrics()`` values."""
        connector_task = getattr(task, "task", None)
        report = getattr(connector_task, "metrics", None)
        if not callable(report):
            return
        try:
            values = dict(report())
        except Exception as exc:  # a connector's bug must not break the whole scrape
            extra = {"connector": task_id.connector, "task": task_id.task, "error": repr(exc)}
            log.warning("task metrics failed", extra=extra)
            return
        for name, value in sorted(values.items()):
            if _NAME.match(name) and isinstance(value, int | float):
                f.add(GaugeMetricFamily, _CUSTOM + name, f"Connector-specific: {name}.",
                      _TASK, labels, float(value))  # fmt: skip


def _rebalance_families(stats: Any) -> Iterator[Metric]:
    """Connect's ``connect-worker-rebalance-metrics`` group: only a distributed worker has
    rebalances (its herder's ``rebalance_stats``); a standalone one exports none of them."""
    if stats is None:
        return
    yield CounterMetricFamily(
        _REBALANCE + "completed_rebalances", "Rebalances this worker completed.",
        value=stats.completed,
    )  # fmt: skip
    yield GaugeMetricFamily(
        _REBALANCE + "rebalancing", "1 while this worker is in a rebalance.",
        value=1 if stats.rebalancing else 0,
    )  # fmt: skip
    yield GaugeMetricFamily(
        _REBALANCE + "epoch", "The group generation in force.", value=stats.epoch
    )
    yield GaugeMetricFamily(
        _REBALANCE + "rebalance_avg_time_ms", "Mean time of a completed rebalance.",
        value=stats.avg_ms,
    )  # fmt: skip
    yield GaugeMetricFamily(
        _REBALANCE + "rebalance_max_time_ms", "Longest completed rebalance.", value=stats.max_ms
    )
    yield GaugeMetricFamily(
        _REBALANCE + "time_since_last_rebalance_ms",
        "Since the last completed rebalance (-1 before the first).", value=stats.since_last_ms(),
    )  # fmt: skip
    leader = GaugeMetricFamily(
        _REBALANCE + "leader_name", "The group leader's REST URL (label leader), value 1.",
        labels=["leader"],
    )  # fmt: skip
    leader.add_metric([stats.leader_url], 1)
    yield leader
