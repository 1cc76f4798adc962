"""ExactlyOnceWorkerSourceTask: a source task whose records and offsets commit together.

Kafka Connect's KIP-618, used when the worker runs with ``exactly.once.source.support=enabled``.
Each task has its own transactional producer, ``transactional.id`` =
``<group.id>-<connector>-<task>``; ``init_transactions`` at start fences any earlier instance
of the same task (a worker killed with ``kill -9``: its open transaction is aborted, its
producer can no longer write). A transaction holds:

- the records of one or more ``poll`` results, produced through ``SourceProducer`` exactly as
  the at-least-once task produces them (transforms, converters, error policy, fast paths);
- the source offsets of those records (the last per source partition), written to the
  connector's offsets topic (``offsets.storage.topic``, else the worker's) by the same producer.

``commit_transaction`` makes both visible at once to ``read_committed`` readers, the offset
store included, so whatever offset a restarted task resumes from, the records up to it are in
the topic exactly once. Boundaries (``TransactionSettings``): every non-empty poll result
(``poll``), a time interval (``interval``) or the task's ``TransactionContext`` requests
(``connector``). After the commit the task's hooks run, in poll order: ``commit_record`` per
record and ``commit_batch`` per record batch, ``commit_records`` per poll result, then
``commit`` (the CDC source confirms its
replication slot there, so the slot never passes a committed offset).

Failures: a delivery or commit error aborts the transaction and fails the task; the worker
restarts it, and it resumes from the last committed offsets. A graceful stop commits what is
open. Dead-letter records still go through the worker's shared producer (at least once).

Threads: everything on the task's thread, except the producer's delivery callbacks, which a
small poller thread serves while the task waits for queue room.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from confluent_kafka import KafkaException, Producer

from hub.api import ConnectError, SourceRecord, SourceRecordBatch
from hub.api.source import as_records
from hub.runtime.config import WorkerConfig
from hub.runtime.exactly_once_config import TransactionSettings
from hub.runtime.storage.offset_store import encode_key
from hub.runtime.submitted_records import SubmittedBatch, SubmittedRecords
from hub.runtime.worker_source_task import WorkerSourceTask, _OffsetReader, _SourceTaskContext

log = logging.getLogger(__name__)

TXN_TIMEOUT_S = 60.0


def transactional_id(group_id: str, connector: str, task: int) -> str:
    """KIP-618's transactional id of a source task."""
    return f"{group_id}-{connector}-{task}"


def fence_transactional_ids(worker: WorkerConfig, connector: str, task_ids: range) -> None:
    """KIP-618's fencing step for tasks that no longer exist: an InitProducerId for each
    one's transactional id aborts whatever it left open and fences it. (Running tasks fence
    their own predecessors when they start.)"""
    for task in task_ids:
        txn_id = transactional_id(worker.group_id, connector, task)
        producer = Producer({**worker.client_config("producer"), "transactional.id": txn_id})
        try:
            producer.init_transactions(TXN_TIMEOUT_S)
            log.info("fenced a removed task's producer",
                     extra={"connector": connector, "transactional_id": txn_id})  # fmt: skip
        except KafkaException as exc:
            log.warning("could not fence a removed task's producer",
                        extra={"transactional_id": txn_id, "error": str(exc)})  # fmt: skip


class TaskTransactionContext:
    """What a task asks for through ``context.transaction_context`` (``connector`` boundary)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.batch_request: str | None = None  # "commit" | "abort" after the next poll result
        self.record_requests: dict[int, tuple[SourceRecord, str]] = {}

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        self._request("commit", record)

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        self._request("abort", record)

    def _request(self, action: str, record: SourceRecord | None) -> None:
        with self._lock:
            if record is None:
                self.batch_request = action
            else:
                self.record_requests[id(record)] = (record, action)

    def take(self) -> tuple[str | None, dict[int, tuple[SourceRecord, str]]]:
        with self._lock:
            batch, records = self.batch_request, self.record_requests
            self.batch_request, self.record_requests = None, {}
            return batch, records


class ExactlyOnceWorkerSourceTask(WorkerSourceTask):
    def initialize(self) -> None:
        worker = self.services.worker_config
        self.settings = TransactionSettings.of(self.connector_config, worker)
        self.transactions = (
            TaskTransactionContext() if self.settings.boundary == "connector" else None
        )
        self.offsets_topic = self.settings.offsets_topic or worker.offset_storage_topic
        if self.settings.offsets_topic:
            self.services.admin.ensure_topic(
                self.offsets_topic, worker.offset_storage_partitions,
                worker.internal_topic_replication_factor, {"cleanup.policy": "compact"},
            )  # fmt: skip
        self.txn_id = transactional_id(worker.group_id, self.id.connector, self.id.task)
        self.txn_producer = Producer(
            {
                "linger.ms": 5,
                "partitioner": "murmur2_random",  # the offsets store's: one key, one partition
                **worker.client_config("producer"),
                "transactional.id": self.txn_id,
                "enable.idempotence": True,
                "acks": "all",
            }
        )
        self._poller_stop = threading.Event()
        self._poller = threading.Thread(
            target=self._poll_producer, name=f"txn-producer-{self.id}", daemon=True
        )
        self._poller.start()
        self.txn_producer.init_transactions(TXN_TIMEOUT_S)  # fences earlier instances
        log.info("exactly-once source task", extra={**self.log_extra, "transactional_id":
                 self.txn_id, "boundary": self.settings.boundary})  # fmt: skip
        self._in_txn = False
        self._txn_started = 0.0
        self._txn_batches: list[SubmittedBatch] = []
        self._txn_offsets: dict[Any, tuple[Any, Any]] = {}
        self.services.offsets_for(self.connector_config).sync()  # resume from the newest commit
        super().initialize()
        assert self.producer is not None
        self.producer.defer_record_hooks = True
        self._reset()  # hooks run after commits, not from acknowledgements

    def _context(self, reader: _OffsetReader) -> _SourceTaskContext:
        return _SourceTaskContext(reader, self.task_config, self.transactions)

    def _producer_client(self) -> Any:
        return self.txn_producer

    def _poll_producer(self) -> None:
        while not self._poller_stop.is_set():
            self.txn_producer.poll(0.05)

    # ------------------------------------------------------------ the loop

    def execute(self) -> None:
        interval = self.settings.interval_ms / 1000
        while not self.stopping.is_set():
            if self.paused:
                self._commit()  # nothing stays open while paused
                self.wait_while_paused(self.services.worker_config.offset_flush_interval_ms
                                       / 1000)  # fmt: skip
                continue
            result = self._poll()
            if result and self.fence_lost():
                break  # the next owner's InitProducerId aborts the open transaction
            if result:
                self._handle(result)
            elif self.settings.boundary != "interval" or not self._in_txn:
                self.stopping.wait(0.005)
            if self.submitted.error is not None:
                self._abort()
                raise ConnectError(f"producing failed: {self.submitted.error}")
            if (
                self.settings.boundary == "interval"
                and self._in_txn
                and time.monotonic() - self._txn_started >= interval
            ):
                self._commit()

    def _handle(self, result: Sequence[Any] | SourceRecordBatch) -> None:
        if self.transactions is None:
            self._send(result)
            if self.settings.boundary == "poll":
                self._commit()
            return
        batch_request, record_requests = self.transactions.take()
        if record_requests:
            records = as_records(result)
            start = 0
            for i, record in enumerate(records):
                request = record_requests.get(id(record))
                if request is not None and request[0] is record:
                    self._send(records[start : i + 1])
                    self._finish(request[1])
                    start = i + 1
            if start < len(records):
                self._send(records[start:])
                if batch_request is not None and not any(
                    r is records[-1] for r, _ in record_requests.values()
                ):
                    self._finish(batch_request)
            return
        self._send(result)
        if batch_request is not None:
            self._finish(batch_request)

    def _send(self, result: Sequence[Any] | SourceRecordBatch) -> None:
        if not result:
            return
        if not self._in_txn:
            self.txn_producer.begin_transaction()
            self._in_txn = True
            self._txn_started = time.monotonic()
        assert self.producer is not None
        batch = self.producer.send(result)
        self.metrics.written(batch.produced)
        self._txn_batches.append(batch)
        self._txn_offsets.update(batch.offsets)

    def _finish(self, action: str) -> None:
        if action == "commit":
            self._commit()
        else:
            self._abort(keep_offsets=True)

    # ------------------------------------------------------------ transactions

    def _write_offsets(self) -> None:
        connector = self.id.connector
        for partition, offset in self._txn_offsets.values():
            if partition or offset:
                self._produce(
                    self.offsets_topic,
                    encode_key(connector, partition).encode(),
                    json.dumps(offset).encode() if offset is not None else None,
                )

    def _produce(self, topic: str, key: bytes, value: bytes | None) -> None:
        while True:
            try:
                self.txn_producer.produce(topic, key=key, value=value)
                return
            except BufferError:
                self.stopping.wait(0.005)

    def _commit(self) -> None:
        """Offsets into the transaction, commit, then the task's hooks (in poll order)."""
        if not self._in_txn:
            return
        try:
            self._write_offsets()
            self.txn_producer.commit_transaction(TXN_TIMEOUT_S)
        except KafkaException as exc:
            self._fail_transaction(exc)
        batches = self._txn_batches
        self._reset()
        self._after_commit(batches)

    def _abort(self, keep_offsets: bool = False) -> None:
        """Aborts the open transaction; with ``keep_offsets`` (a task's request, Kafka's rule)
        its offsets are committed in a transaction of their own, so nothing is re-read."""
        if not self._in_txn:
            return
        offsets = self._txn_offsets
        try:
            self.txn_producer.abort_transaction(TXN_TIMEOUT_S)
        except KafkaException as exc:
            log.warning("abort failed", extra={**self.log_extra, "error": str(exc)})
        self._reset()
        if keep_offsets and offsets:
            self._txn_offsets = offsets
            self.txn_producer.begin_transaction()
            self._in_txn = True
            self._commit()

    def _reset(self) -> None:
        self._in_txn = False
        self._txn_batches = []
        self._txn_offsets = {}
        self.submitted = SubmittedRecords()
        if self.producer is not None:
            self.producer.submitted = self.submitted

    def _fail_transaction(self, exc: KafkaException) -> None:
        error = exc.args[0]
        if not error.fatal():
            with contextlib.suppress(KafkaException):
                self.txn_producer.abort_transaction(TXN_TIMEOUT_S)
        self._reset()
        raise ConnectError(f"transaction failed ({self.txn_id}): {error.str()}") from exc

    def _after_commit(self, batches: list[SubmittedBatch]) -> None:
        task = self.task
        if task is None:
            return
        for batch in batches:
            for call in batch.deferred or ():
                try:
                    call()
                except Exception:
                    log.exception("commit hook failed", extra=self.log_extra)
            if batch.records is not None:
                self._commit_records(list(batch.records))
        try:
            task.commit()
        except Exception:
            log.exception("task commit hook failed", extra=self.log_extra)

    # ------------------------------------------------------------ base-class hooks

    def commit_offsets(self, wait: float = 0.0) -> bool:
        """Offsets commit with their transaction (``_commit``), never on a timer."""
        return True

    def close(self) -> None:
        try:
            if (
                self._started
                and not self.failed
                and not self.fenced
                and getattr(self, "_in_txn", False)
            ):
                self._commit()  # a graceful stop keeps what was polled
        except Exception:
            log.exception("final transaction commit failed", extra=self.log_extra)
        finally:
            self._stop_task()
            poller_stop = getattr(self, "_poller_stop", None)
            if poller_stop is not None:
                poller_stop.set()
                self._poller.join(5)
            if getattr(self, "txn_producer", None) is not None:
                self.txn_producer.flush(5)
                # Dropping the client ends librdkafka's threads now, not at some later GC.
                self.txn_producer = None  # type: ignore[assignment]
                if self.producer is not None:
                    self.producer.producer = None
            if self.chain is not None:
                from hub.runtime.plugin_setup import close_chain

                close_chain(self.chain)
