"""Runs one SourceTask: its lifecycle, the poll loop and source-offset commits.

Producing is ``SourceProducer``'s job (hub/runtime/source_producer.py: transforms, converters,
the fast paths); this class starts and stops the connector's task, polls it, hands each
result to the producer and commits offsets.

Ordering and delivery: records are produced in poll order through the worker's single
idempotent producer (acks=all), so the broker keeps each topic partition in order without
duplicates from producer retries. Each poll result is tracked as one batch in
``SubmittedRecords``; offsets are committed (every ``offset.flush.interval.ms``, and on stop
after waiting up to ``offset.flush.timeout.ms`` for outstanding acknowledgements) only up to
the last record of each source partition whose batch was wholly acknowledged. A clean stop
therefore resumes exactly where it left off; a crash resumes from the last commit and re-sends
what followed (at-least-once, never a loss). A failed delivery fails the task: the producer
already retried internally.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hub.api import ConnectError, RetriableError, SourceRecord, SourceRecordBatch, SourceTask
from hub.api.source import PollResult
from hub.runtime.error_handling import ErrorHandlingConfig, RetryWithToleranceOperator
from hub.runtime.plugin_setup import build_converters, build_transform_chain, close_chain
from hub.runtime.source_producer import SourceProducer
from hub.runtime.storage.offset_store import PartitionKey, partition_key
from hub.runtime.submitted_records import SubmittedRecords
from hub.runtime.task_metrics import record_count
from hub.runtime.worker_task import ConnectorTaskId, TaskServices, TaskStatusListener, WorkerTask

log = logging.getLogger(__name__)


class _OffsetReader:
    def __init__(self, store: Any, connector: str) -> None:
        self._store = store
        self._connector = connector

    def offset(self, partition: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self._store.get(self._connector, partition)  # type: ignore[no-any-return]

    def offsets(self, partitions: Iterable[Mapping[str, Any]]) -> dict[PartitionKey, Any]:
        out = {}
        for p in partitions:
            offset = self.offset(p)
            if offset is not None:
                out[partition_key(p)] = offset
        return out


class _SourceTaskContext:
    def __init__(
        self, reader: _OffsetReader, config: Mapping[str, Any], transactions: Any = None
    ) -> None:
        self._reader = reader
        self._config = config
        self._transactions = transactions

    @property
    def offset_reader(self) -> _OffsetReader:
        return self._reader

    @property
    def config(self) -> Mapping[str, Any]:
        return self._config

    @property
    def transaction_context(self) -> Any:
        return self._transactions


class WorkerSourceTask(WorkerTask):
    def __init__(
        self,
        id: ConnectorTaskId,
        task_class: type[SourceTask],
        task_config: dict[str, Any],
        connector_config: dict[str, str],
        services: TaskServices,
        listener: TaskStatusListener,
        initial_state: str = "STARTED",
    ) -> None:
        super().__init__(id, listener, initial_state)
        self.task_class = task_class
        self.task_config = task_config
        self.connector_config = connector_config
        self.services = services
        self.submitted = SubmittedRecords()
        self.task: SourceTask | None = None
        self.chain: Any = None
        self.errors = RetryWithToleranceOperator(
            ErrorHandlingConfig.from_connector_config(connector_config),
            id.connector,
            id.task,
            stopping=self.stopping,
            dlq=services.dlq_writer,
        )
        self.producer: SourceProducer | None = None
        self.offset_store: Any = services.offset_store
        self._unstored: dict[PartitionKey, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        self._started = False
        self._task_stopped = False
        self.member_alive = services.member_alive

    def initialize(self) -> None:
        registry, worker = self.services.registry, self.services.worker_config
        converters = build_converters(registry, worker, self.connector_config)
        self.chain = build_transform_chain(registry, self.connector_config)
        self.offset_store = self.services.offsets_for(self.connector_config)
        reader = _OffsetReader(self.offset_store, self.id.connector)
        task = self.task = self.task_class(self._context(reader))
        if self.task_class.commit_records is not SourceTask.commit_records:
            self.submitted = SubmittedRecords(on_complete=self._commit_records)
        self.producer = SourceProducer(
            task=task,
            converters=converters,
            chain=self.chain,
            errors=self.errors,
            producer=self._producer_client(),
            submitted=self.submitted,
            ensure_topic=self._create_topic,
            stopping=self.stopping,
            log_extra=self.log_extra,
        )
        task.start(self.task_config)
        self._started = True

    def _context(self, reader: _OffsetReader) -> _SourceTaskContext:
        return _SourceTaskContext(reader, self.task_config)

    def _producer_client(self) -> Any:
        """The confluent-kafka producer records go to: the worker's shared one."""
        return self.services.producer

    def execute(self) -> None:
        assert self.task is not None and self.producer is not None
        send = self.producer.send
        interval = self.services.worker_config.offset_flush_interval_ms / 1000
        next_commit = time.monotonic() + interval
        while not self.stopping.is_set():
            if self.paused:
                self.wait_while_paused(interval)
            elif result := self._poll():
                if self.fence_lost():
                    break  # another worker may own this task now: nothing more goes out
                self.metrics.written(send(result).produced)
            else:
                # A task that returns at once with nothing must not spin a core (and the GIL).
                self.stopping.wait(0.005)
            if self.submitted.error is not None:
                raise ConnectError(f"producing failed: {self.submitted.error}")
            if time.monotonic() >= next_commit:
                self.commit_offsets()
                next_commit = time.monotonic() + interval

    def _poll(self) -> PollResult:
        assert self.task is not None
        started = time.perf_counter()
        try:
            result = self.task.poll()
        except RetriableError as exc:
            log.warning("poll failed, retrying", extra={**self.log_extra, "error": str(exc)})
            self.stopping.wait(0.1)
            return None
        if result:
            self.metrics.polled(record_count(result), started)
        return result

    def _send_batch(self, result: Sequence[Any] | SourceRecordBatch) -> None:
        """Produces one poll result (``SourceProducer.send``)."""
        assert self.producer is not None
        self.producer.send(result)

    def _commit_records(self, records: Sequence[SourceRecord]) -> None:
        try:
            self.task.commit_records(records)  # type: ignore[union-attr,arg-type]
        except Exception:
            log.exception("commit_records failed", extra=self.log_extra)

    def _create_topic(self, topic: str) -> None:
        """Before a topic's first record: create it (per ``topic.creation.default.*``) and
        note it in the connector's active topics."""
        config = self.connector_config
        self.services.admin.ensure_topic(
            topic,
            int(config.get("topic.creation.default.partitions", -1)),
            int(config.get("topic.creation.default.replication.factor", -1)),
        )
        self.services.status_store.put_topic(self.id.connector, topic, self.id.task)

    def commit_offsets(self, wait: float = 0.0) -> bool:
        """Stores the committable offsets; with ``wait``, first waits for outstanding acks."""
        if self.fence_lost():
            return False
        if wait and not self.submitted.await_all(wait):
            log.warning(
                "records still unacknowledged at commit",
                extra={**self.log_extra, "outstanding": self.submitted.outstanding},
            )
        # ``committable`` hands each offset out once: what a failed write could not store is
        # kept here and written with (or replaced by) the next interval's offsets.
        for partition, offset in self.submitted.committable():
            self._unstored[partition_key(partition)] = (partition, offset)
        if not self._unstored:
            return True
        offsets = list(self._unstored.values())
        started = time.perf_counter()
        try:
            self.offset_store.put(self.id.connector, offsets)
        except Exception as exc:  # retried at the next interval; the records are not lost
            self.commit_health.failed(exc)
            self.metrics.committed(False, started)
            return False
        self._unstored.clear()
        self.commit_health.succeeded()
        self.metrics.committed(True, started)
        log.debug("committed offsets", extra={**self.log_extra, "partitions": len(offsets)})
        if self.task is not None:
            try:
                self.task.commit()
            except Exception:
                log.exception("task commit hook failed", extra=self.log_extra)
        return True

    def wake(self) -> None:
        if self.stopping.is_set():
            self._stop_task()

    def _stop_task(self) -> None:
        """Calls ``SourceTask.stop`` once (from ``stop()``'s thread or from ``close``)."""
        task = self.task
        if task is None or self._task_stopped:
            return
        self._task_stopped = True
        try:
            task.stop()
        except Exception:
            log.exception("task stop failed", extra=self.log_extra)

    def close(self) -> None:
        timeout = self.services.worker_config.offset_flush_timeout_ms / 1000
        if self._started:
            self.commit_offsets(wait=timeout)
        self._stop_task()
        if self.chain is not None:
            close_chain(self.chain)
