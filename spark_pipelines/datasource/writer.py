"""Batch and streaming writers: rows (key, value, headers, topic, partition) -> topics.

Delivery guarantees
-------------------
- **Batch writes** (``df.write.format("sluice")``) are at-least-once: each task produces with
  an idempotent producer and waits for every ack, but a Spark task retried after a failure
  produces its rows again.
- **Streaming writes** are exactly-once in the output topic for deterministic queries (the
  same batch id always carries the same rows in the same task order, which holds for Spark
  micro-batches replayed from a checkpoint), without Kafka transactions:

  1. every produced record carries a header ``sluice.write = <writer>|<batch>|<task>|<row>``;
  2. after all tasks of batch B succeed, ``commit`` writes ``{"batch": B, "marks": high
     watermarks of the topics written}`` under key ``<writer>`` to the compacted topic
     ``__sluice_spark_commits``;
  3. when the writer is created (query start) it reads its last marker L. A replayed batch
     ``<= L`` (committed here, not yet in Spark's checkpoint) is skipped entirely; batch L+1
     may have been partly written before a crash, so the writer scans the output topics from
     the marker's watermarks to their current end and skips exactly the (task, row) pairs
     whose header is already there.

  ``<writer>`` is option ``writerId``, else the query's ``checkpointLocation``, else the topic.
  Two queries must not share one. Topics named only by a ``topic`` column and not written
  since the last marker are not scanned (give option ``topic`` or a stable topic set).
- **Transactional streaming writes** (option ``transactional=true``): each micro-batch task
  writes its rows and a commit marker in one Kafka transaction whose transactional id comes
  from the writer id, the batch id and the partition (``_transactional``). ``read_committed``
  readers see every row exactly once and never a failed attempt's rows (the dedupe mode above
  leaves those visible until Spark retries); a replayed batch's tasks find their marker and
  write nothing. Needs a broker with transactions (Kafka, or Sluice's).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from spark_pipelines.datasource import _commits, _transactional
from spark_pipelines.datasource._options import Options
from spark_pipelines.datasource._produce import produce_batches

log = logging.getLogger(__name__)

HEADER = _commits.HEADER


@dataclass(frozen=True)
class TaskWritten(WriterCommitMessage):
    rows: int
    skipped: int
    topics: tuple[str, ...]


class _Base:
    def __init__(self, options: Mapping[str, Any], schema: StructType) -> None:
        opts = Options(options)
        self.kafka_config = opts.kafka_config()
        self.topic = opts.get("topic")
        if self.topic is None and "topic" not in schema.fieldNames():
            raise ValueError("the sluice writer needs option 'topic' or a 'topic' column")
        self.opts = opts


class SluiceBatchWriter(_Base, DataSourceArrowWriter):
    """``df.write.format("sluice")``: at-least-once (a retried task writes again)."""

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        done = produce_batches(self.kafka_config, self.topic, iterator)
        return TaskWritten(done.rows, 0, tuple(sorted(done.topics)))


class SluiceStreamWriter(_Base, DataSourceStreamArrowWriter):
    """``writeStream.format("sluice")``: replayed batch ids are harmless (see module doc)."""

    def __init__(self, options: Mapping[str, Any], schema: StructType) -> None:
        super().__init__(options, schema)
        self.writer_id = (
            self.opts.get("writerId") or self.opts.get("checkpointLocation") or str(self.topic)
        )
        flag = str(self.opts.get("transactional") or "false").strip().lower()
        if flag not in ("true", "false"):
            raise ValueError(f"option transactional must be true or false, not {flag!r}")
        self.transactional = flag == "true"
        self.last_batch = -1
        self.partial: frozenset[tuple[int, int]] = frozenset()
        if self.transactional:
            _transactional.ensure_marker_topic(self.kafka_config)
            log.info("sluice stream writer %s: transactional", self.writer_id)
            return
        state = _commits.load(self.kafka_config, self.writer_id, self.topic)
        self.last_batch = state.batch
        self.partial = state.partial
        log.info(
            "sluice stream writer %s: last committed batch %s, %d rows of batch %s written",
            self.writer_id,
            self.last_batch,
            len(self.partial),
            self.last_batch + 1,
        )

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        ctx = TaskContext.get()
        assert ctx is not None
        batch_id = int(ctx.getLocalProperty("streaming.sql.batchId") or -1)
        task = ctx.partitionId()
        if self.transactional:
            done = _transactional.write_task(
                self.kafka_config, self.writer_id, batch_id, task, self.topic, iterator
            )
            return TaskWritten(done.rows, done.skipped, tuple(sorted(done.topics)))
        if batch_id <= self.last_batch:
            skipped = sum(b.num_rows for b in iterator)
            log.info("writer %s batch %d already committed: skipped", self.writer_id, batch_id)
            return TaskWritten(0, skipped, ())
        partial = self.partial if batch_id == self.last_batch + 1 else frozenset()
        prefix = f"{self.writer_id}|{batch_id}|{task}|"

        def tag(row: int) -> tuple[str, bytes] | None:
            if (task, row) in partial:
                return None
            return (HEADER, f"{prefix}{row}".encode())

        done = produce_batches(self.kafka_config, self.topic, iterator, tag=tag)
        return TaskWritten(done.rows, done.skipped, tuple(sorted(done.topics)))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        if self.transactional:
            return  # each task committed its own transaction with its marker
        topics = {t for m in messages if isinstance(m, TaskWritten) for t in m.topics}
        if self.topic:
            topics.add(self.topic)
        _commits.record(self.kafka_config, self.writer_id, batchId, sorted(topics))

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.warning(
            "writer %s batch %d aborted; a retry skips rows already written",
            self.writer_id,
            batchId,
        )


def header_token(value: bytes) -> tuple[str, int, int, int]:
    """``(writer, batch, task, row)`` of a ``sluice.write`` header value (tests and tools)."""
    writer, batch, task, row = value.decode().rsplit("|", 3)
    return writer, int(batch), int(task), int(row)
