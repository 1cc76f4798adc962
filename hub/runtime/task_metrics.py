"""Kafka Connect's task metrics for one task: plain counters its own thread updates.

The groups and attributes are Connect's (``connector-task-metrics``, ``source-task-metrics``,
``sink-task-metrics``, ``task-error-metrics``); ``hub.runtime.metrics`` renders them for
Prometheus. Counting is per poll result and per ``put`` batch, never per record, and takes no
lock: the task's thread is the only writer, and a scrape reading an int while it changes sees
the old or the new value, both correct at some instant. Rates are not kept here: Prometheus
derives them from the ``_total`` counters (``rate()``), so nothing needs a time window.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from hub.api import SourceRecordBatch


def record_count(result: Sequence[Any] | SourceRecordBatch) -> int:
    """Records in a poll result (a ``SourceRecordBatch`` counts its rows)."""
    if isinstance(result, SourceRecordBatch):
        return len(result)
    return sum(len(item) if isinstance(item, SourceRecordBatch) else 1 for item in result)


class TaskMetrics:
    """One task's counters (cumulative since the task object started)."""

    __slots__ = (
        "batch_count",
        "batch_records",
        "batch_size_max",
        "offset_commit_failure",
        "offset_commit_max_ms",
        "offset_commit_success",
        "offset_commit_total_ms",
        "poll_batch_max_ms",
        "poll_batch_total_ms",
        "put_batch_max_ms",
        "put_batch_total_ms",
        "sink_record_read",
        "sink_record_send",
        "source_record_poll",
        "source_record_write",
    )

    def __init__(self) -> None:
        self.batch_count = 0
        self.batch_records = 0
        self.batch_size_max = 0
        self.offset_commit_success = 0
        self.offset_commit_failure = 0
        self.offset_commit_total_ms = 0.0
        self.offset_commit_max_ms = 0.0
        self.source_record_poll = 0
        self.source_record_write = 0
        self.poll_batch_total_ms = 0.0
        self.poll_batch_max_ms = 0.0
        self.sink_record_read = 0
        self.sink_record_send = 0
        self.put_batch_total_ms = 0.0
        self.put_batch_max_ms = 0.0

    def _batch(self, size: int) -> None:
        self.batch_count += 1
        self.batch_records += size
        if size > self.batch_size_max:
            self.batch_size_max = size

    def polled(self, records: int, started: float) -> None:
        """A source ``poll()`` that returned ``records`` (started at ``perf_counter()``)."""
        ms = (time.perf_counter() - started) * 1000.0
        self.source_record_poll += records
        self.poll_batch_total_ms += ms
        if ms > self.poll_batch_max_ms:
            self.poll_batch_max_ms = ms
        self._batch(records)

    def written(self, records: int) -> None:
        """Records handed to the producer after transforms (filtered ones are not written)."""
        self.source_record_write += records

    def read(self, records: int) -> None:
        """Records a sink's consumer returned."""
        self.sink_record_read += records

    def put(self, records: int, started: float) -> None:
        """One ``put`` the task accepted, with ``records`` records."""
        ms = (time.perf_counter() - started) * 1000.0
        self.sink_record_send += records
        self.put_batch_total_ms += ms
        if ms > self.put_batch_max_ms:
            self.put_batch_max_ms = ms
        if records:
            self._batch(records)

    def committed(self, ok: bool, started: float) -> None:
        """One offset commit attempt (skipped commits with nothing to commit are not counted)."""
        ms = (time.perf_counter() - started) * 1000.0
        if ok:
            self.offset_commit_success += 1
        else:
            self.offset_commit_failure += 1
        self.offset_commit_total_ms += ms
        if ms > self.offset_commit_max_ms:
            self.offset_commit_max_ms = ms
