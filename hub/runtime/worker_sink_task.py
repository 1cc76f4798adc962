"""Runs one SinkTask: lifecycle, the consumer in group ``connect-<name>``, put and commits.

Building what ``put`` receives (converters, transforms, the lazy ``SinkRecordBatch``) is
``SinkRecordBuilder``'s job (hub/runtime/sink_record_builder.py); this class owns the consumer,
the assignment, pauses, rewinds and offset commits.

Offsets: ``current`` holds, per assigned partition, the next offset after the records handed
to ``put`` (or skipped as tolerated failures / dropped by a transform). Every
``offset.flush.interval.ms`` (or on ``context.request_commit()``), on revocation and on stop,
the task's ``pre_commit(current)`` decides what is durable, and only those offsets are
committed, synchronously. A crash therefore redelivers everything the task had not confirmed.

Threading: the consumer, and so every rebalance callback (``open``/``close``), runs on the
task's thread. A connector PAUSE pauses every assigned partition but keeps polling, so the
task keeps its group membership and its assignment. ``put`` raising ``RetriableError`` gets
the same batch again after a backoff (``retry_backoff``); any other exception fails the task.
Every poll calls ``put``, with an empty batch when nothing arrived (about every 100 ms while
idle).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from hub.api import ConfigError, RetriableError, SinkRecord, SinkTask, TopicPartition
from hub.api.client_settings import client_setting_errors
from hub.api.sink import SinkRecordBatch
from hub.runtime.error_handling import (
    ErrorHandlingConfig,
    FailureContext,
    RetryWithToleranceOperator,
)
from hub.runtime.errors import StopRetrying
from hub.runtime.plugin_setup import build_converters, build_transform_chain, close_chain
from hub.runtime.retry import put_backoff
from hub.runtime.sink_record_builder import SinkRecordBuilder
from hub.runtime.worker_task import ConnectorTaskId, TaskServices, TaskStatusListener, WorkerTask

log = logging.getLogger(__name__)


def group_id(connector: str) -> str:
    return f"connect-{connector}"


class _SinkTaskContext:
    def __init__(self, owner: WorkerSinkTask) -> None:
        self._owner = owner

    @property
    def config(self) -> Mapping[str, Any]:
        return self._owner.task_config

    def assignment(self) -> set[TopicPartition]:
        return set(self._owner.assignment)

    def pause(self, *partitions: TopicPartition) -> None:
        self._owner.task_paused.update(partitions)
        self._owner.sync_pause()

    def resume(self, *partitions: TopicPartition) -> None:
        self._owner.task_paused.difference_update(partitions)
        self._owner.sync_pause()

    def offset(self, partition: TopicPartition, offset: int) -> None:
        self._owner.rewinds[partition] = offset

    def request_commit(self) -> None:
        self._owner.commit_requested = True

    def errant_record_reporter(self) -> _ErrantRecordReporter:
        return self._owner.reporter


class _ErrantRecordReporter:
    """KIP-610's reporter: a record ``put`` skips goes through the connector's error policy.

    The DLQ gets the consumed message's original bytes and headers (found among the messages
    of the batch being delivered), as for a conversion failure; a record that matches none
    (e.g. reported after its ``put``) is written as JSON like a failed source record.
    """

    def __init__(self, owner: WorkerSinkTask) -> None:
        self._owner = owner

    def report(self, record: SinkRecord, error: Exception) -> None:
        owner = self._owner
        raw = owner.find_message(record)
        context = FailureContext("TASK_PUT", type(owner.task).__name__, source=record, raw=raw)
        owner.errors.report(context, error)


class WorkerSinkTask(WorkerTask):
    def __init__(
        self,
        id: ConnectorTaskId,
        task_class: type[SinkTask],
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
        self.member_alive = services.member_alive
        self.errors = RetryWithToleranceOperator(
            ErrorHandlingConfig.from_connector_config(connector_config),
            id.connector,
            id.task,
            stopping=self.stopping,
            dlq=services.dlq_writer,
        )
        self.task: SinkTask | None = None
        self.consumer: Consumer | None = None
        self.assignment: set[TopicPartition] = set()
        self._assigned_keys: set[tuple[str, int]] = set()
        self.current: dict[TopicPartition, int] = {}
        self.committed: dict[TopicPartition, int] = {}
        self.rewinds: dict[TopicPartition, int] = {}
        self.task_paused: set[TopicPartition] = set()
        self.commit_requested = False
        self._consumer_paused: set[TopicPartition] = set()
        self.chain: Any = None
        self.reporter = _ErrantRecordReporter(self)
        self._batch_messages: list[Message] = []  # of the batch being delivered, for reporter

    def initialize(self) -> None:
        registry, worker = self.services.registry, self.services.worker_config
        converters = build_converters(registry, worker, self.connector_config)
        self.chain = build_transform_chain(registry, self.connector_config)
        self.builder = SinkRecordBuilder(
            converters=converters,
            chain=self.chain,
            errors=self.errors,
            assigned=self._assigned_keys,
            on_new_topic=self._note_topic,
            log_extra=self.log_extra,
        )
        overrides = {
            k[len("consumer.override.") :]: v
            for k, v in self.connector_config.items()
            if k.startswith("consumer.override.")
        }
        refused = client_setting_errors(overrides)  # also for configs that skipped the REST API
        if refused:
            reasons = "; ".join(f"consumer.override.{k} {r[0]}" for k, r in refused.items())
            raise ConfigError(f"refused: {reasons}", refused)
        self.consumer = Consumer(
            {
                # A worker killed with -9 leaves its member behind until the session times
                # out, stalling the partitions; 10 s instead of librdkafka's 45 s bounds that.
                "session.timeout.ms": 10_000,
                # librdkafka stops fetching a partition for fetch.queue.backoff.ms (1 s) once
                # its local queue holds queued.min.messages: a sink slower than the fetches
                # then drains the queue and idles for the rest of that second, which capped
                # a file sink at ~100k records/s. 10 ms keeps fetching while it catches up.
                "fetch.queue.backoff.ms": 10,
                **worker.client_config("consumer"),
                **overrides,
                "group.id": group_id(self.id.connector),
                "client.id": f"connector-consumer-{self.id}",
                "enable.auto.commit": False,
                "auto.offset.reset": overrides.get("auto.offset.reset", "earliest"),
                "enable.partition.eof": False,
            }
        )
        self.task = self.task_class(_SinkTaskContext(self))
        self.task.start(self.task_config)
        topics = [
            t.strip() for t in self.connector_config.get("topics", "").split(",") if t.strip()
        ]
        regex = self.connector_config.get("topics.regex", "").strip()
        subscription = topics or [regex if regex.startswith("^") else "^" + regex]
        self.consumer.subscribe(subscription, on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_revoke)  # fmt: skip

    def execute(self) -> None:
        assert self.consumer is not None
        interval = self.services.worker_config.offset_flush_interval_ms / 1000
        next_commit = time.monotonic() + interval
        while not self.stopping.is_set():
            self.sync_pause()
            self._apply_rewinds()
            messages = self.consumer.consume(500, 0.1)
            self.metrics.read(len(messages))
            # plain (topic, partition) tuples: hashed in C, this loop runs per record
            offsets: dict[tuple[str, int], int] = {}
            batch = self.builder.batch(messages, offsets)
            self._batch_messages = messages
            if self.fence_lost():
                break  # another worker may own this task now: deliver and commit nothing
            # An idle poll still calls put([]), as Kafka Connect does: a sink that rolls files
            # or batches on time (rotate.schedule.interval.ms) can close a quiet one promptly.
            started = time.perf_counter()
            if self._deliver(batch):
                self.metrics.put(_records_put(batch), started)
                for (topic, partition), offset in offsets.items():
                    self.current[TopicPartition(topic, partition)] = offset
            if self.commit_requested or time.monotonic() >= next_commit:
                self.commit_requested = False
                started = time.perf_counter()
                try:
                    committed = self.commit(self.assignment)
                except KafkaException as exc:
                    # e.g. a rebalance in progress: the next interval (or close) retries;
                    # nothing is lost, the uncommitted records are only redelivered.
                    self.commit_health.failed(exc)
                    self.metrics.committed(False, started)
                else:
                    self.commit_health.succeeded()
                    if committed:
                        self.metrics.committed(True, started)
                next_commit = time.monotonic() + interval

    def find_message(self, record: SinkRecord) -> Message | None:
        """The consumed message ``record`` came from, in the batch being delivered."""
        partition, offset = record.partition, record.offset
        found = None
        for msg in self._batch_messages:
            if msg.offset() == offset and msg.partition() == partition and msg.error() is None:
                if msg.topic() == record.topic:
                    return msg
                found = found or msg  # a transform may have renamed the topic
        return found

    def _note_topic(self, topic: str) -> None:
        self.services.status_store.put_topic(self.id.connector, topic, self.id.task)

    def _deliver(self, batch: list[SinkRecord] | SinkRecordBatch) -> bool:
        """Calls ``put`` until it accepts the batch; False if stopped before it did.

        A ``SinkRecordBatch`` is settled after ``put``: conversion failures the task did not
        look at are reported (or fail the task) as if the records had been built up front.
        """
        task = self.task
        assert task is not None

        def attempt() -> None:
            try:
                task.put(batch)
                if type(batch) is SinkRecordBatch:
                    batch.settle()
            except RetriableError as exc:
                if type(batch) is SinkRecordBatch and batch.failure is not None:
                    # the records could not be built (an intolerable conversion failure):
                    # retrying put cannot help; fail the task as the eager path would
                    raise batch.failure from exc
                raise

        def warn(state: Any) -> None:
            error = state.outcome.exception() if state.outcome else None
            log.warning("put failed, retrying", extra={**self.log_extra, "error": str(error)})

        try:
            attempt()  # the common case, without building a retry policy per poll
            return True
        except RetriableError as exc:
            failed = [exc]

        def again() -> None:
            if failed:
                raise failed.pop()  # the attempt above, so the policy starts with its wait
            attempt()

        try:
            put_backoff(self.stopping, before_sleep=warn)(again)
        except StopRetrying:
            return False
        return True

    def commit(self, partitions: set[TopicPartition]) -> bool:
        """pre_commit + synchronous commit of what the task confirmed, for ``partitions``;
        False when there was nothing new to commit (or the worker's membership lapsed)."""
        if self.task is None or self.consumer is None or self.fence_lost():
            return False
        current = {tp: off for tp, off in self.current.items() if tp in partitions}
        if not current:
            return False
        confirmed = self.task.pre_commit(dict(current))
        to_commit = {
            tp: off
            for tp, off in (confirmed or {}).items()
            if tp in current and off is not None and self.committed.get(tp) != off
        }
        if not to_commit:
            return False
        self.consumer.commit(
            offsets=[
                KafkaTopicPartition(tp.topic, tp.partition, off) for tp, off in to_commit.items()
            ],
            asynchronous=False,
        )
        self.committed.update(to_commit)
        log.debug("committed offsets", extra={**self.log_extra, "partitions": len(to_commit)})
        return True

    def _on_assign(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        tps = [TopicPartition(p.topic, p.partition) for p in partitions]
        self.assignment.update(tps)
        self._assigned_keys.update((tp.topic, tp.partition) for tp in tps)
        assert self.task is not None
        self.task.open(tps)
        for p, tp in zip(partitions, tps, strict=True):
            if tp in self.rewinds:
                p.offset = self.rewinds.pop(tp)
        consumer.assign(partitions)
        self._consumer_paused.difference_update(tps)
        log.info("partitions assigned", extra={**self.log_extra, "partitions": len(tps)})

    def _on_revoke(self, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        tps = {TopicPartition(p.topic, p.partition) for p in partitions}
        try:
            self.commit(tps)
        except Exception:
            log.exception("commit on revocation failed", extra=self.log_extra)
        if self.task is not None:
            self.task.close(sorted(tps, key=lambda t: (t.topic, t.partition)))
        for tp in tps:
            self.assignment.discard(tp)
            self._assigned_keys.discard((tp.topic, tp.partition))
            self.current.pop(tp, None)
            self.committed.pop(tp, None)
            self._consumer_paused.discard(tp)

    def sync_pause(self) -> None:
        """Makes the consumer's paused set match connector PAUSE plus ``context.pause``."""
        if self.consumer is None:
            return
        want = set(self.assignment) if self.paused else self.task_paused & self.assignment
        if want == self._consumer_paused:
            return
        if add := want - self._consumer_paused:
            self.consumer.pause([KafkaTopicPartition(t.topic, t.partition) for t in add])
        if drop := self._consumer_paused - want:
            self.consumer.resume([KafkaTopicPartition(t.topic, t.partition) for t in drop])
        self._consumer_paused = want

    def _apply_rewinds(self) -> None:
        assert self.consumer is not None
        for tp in [tp for tp in self.rewinds if tp in self.assignment]:
            offset = self.rewinds.pop(tp)
            try:
                self.consumer.seek(KafkaTopicPartition(tp.topic, tp.partition, offset))
            except Exception as exc:
                log.warning("rewind failed", extra={**self.log_extra, "error": str(exc)})
                continue
            self.current[tp] = offset

    def close(self) -> None:
        try:
            if self.task is not None and not self.failed:
                self.commit(self.assignment)
            if self.task is not None:
                if not self.fenced:  # a fenced task's close could flush data another owns
                    self.task.close(sorted(self.assignment, key=lambda t: (t.topic, t.partition)))
                self.task.stop()
        finally:
            if self.consumer is not None:
                self.consumer.close()
            if self.chain is not None:
                close_chain(self.chain)


def _records_put(batch: list[SinkRecord] | SinkRecordBatch) -> int:
    """How many records ``put`` accepted, without building what the sink did not ask for: a
    settled batch whose records were never built converted cleanly, one record per message
    (``SinkRecordBatch.settle``), while ``len`` would build them all (2.5x the CPU per
    message of a file sink that writes the columns)."""
    if type(batch) is SinkRecordBatch and not batch.materialised:
        return batch.message_count
    return len(batch)
