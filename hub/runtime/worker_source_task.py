"""Runs one SourceTask: poll -> transforms -> converters -> the worker's idempotent producer.

Ordering and delivery: records are produced in poll order through the worker's single
idempotent producer (acks=all), so the broker keeps each topic partition in order without
duplicates from producer retries. Each poll result is tracked as one batch in
``SubmittedRecords``; offsets are committed (every ``offset.flush.interval.ms``, and on stop
after waiting up to ``offset.flush.timeout.ms`` for outstanding acknowledgements) only up to
the last record of each source partition whose batch was wholly acknowledged. A clean stop
therefore resumes exactly where it left off; a crash resumes from the last commit and re-sends
what followed (at-least-once, never a loss). A failed delivery fails the task: the producer
already retried internally.

Speed: with no transforms and no per-record ``commit_record`` hook (the common case), records
take ``_send_fast``: converters called directly, one shared delivery callback per batch, no
per-record wrapper; a record whose conversion fails falls back to the error-handling path.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import KafkaError

from hub.api import ConnectError, RetriableError, SourceRecord, SourceTask
from hub.converters.headers import SimpleHeaderConverter, StringHeaderConverter
from hub.converters.string import StringConverter
from hub.runtime.error_handling import ErrorHandlingConfig, RetryWithToleranceOperator
from hub.runtime.plugin_setup import (
    IdentityChain,
    RecordConverters,
    build_converters,
    build_transform_chain,
    close_chain,
)
from hub.runtime.storage.offset_store import PartitionKey, partition_key
from hub.runtime.submitted_records import SubmittedBatch, SubmittedRecords
from hub.runtime.worker_task import ConnectorTaskId, TaskServices, TaskStatusListener, WorkerTask

log = logging.getLogger(__name__)


class _OffsetReader:
    def __init__(self, services: TaskServices, connector: str) -> None:
        self._store = services.offset_store
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
    def __init__(self, reader: _OffsetReader, config: Mapping[str, Any]) -> None:
        self._reader = reader
        self._config = config

    @property
    def offset_reader(self) -> _OffsetReader:
        return self._reader

    @property
    def config(self) -> Mapping[str, Any]:
        return self._config


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
        self.converters: RecordConverters | None = None
        self.chain: Any = None
        self.errors = RetryWithToleranceOperator(
            ErrorHandlingConfig.from_connector_config(connector_config),
            id.connector,
            id.task,
            stopping=self.stopping,
            dlq=services.dlq_writer,
        )
        self._topics_seen: set[str] = set()
        self._started = False
        self._task_stopped = False
        self._identity = False
        self._text_headers = False
        self._wants_commit_record = False
        self._wants_commit_records = False

    def initialize(self) -> None:
        registry, worker = self.services.registry, self.services.worker_config
        self.converters = build_converters(registry, worker, self.connector_config)
        self.chain = build_transform_chain(registry, self.connector_config)
        self._identity = isinstance(self.chain, IdentityChain)
        header_type = type(self.converters.header)
        self._text_headers = header_type in (SimpleHeaderConverter, StringHeaderConverter)
        # Per-record callbacks into the task only if it overrides the optional hook.
        self._wants_commit_record = self.task_class.commit_record is not SourceTask.commit_record
        self._wants_commit_records = self.task_class.commit_records is not SourceTask.commit_records
        reader = _OffsetReader(self.services, self.id.connector)
        self.task = self.task_class(_SourceTaskContext(reader, self.task_config))
        if self._wants_commit_records:
            self.submitted = SubmittedRecords(on_complete=self._commit_records)
        self.task.start(self.task_config)
        self._started = True

    def execute(self) -> None:
        assert self.task is not None
        interval = self.services.worker_config.offset_flush_interval_ms / 1000
        next_commit = time.monotonic() + interval
        while not self.stopping.is_set():
            if self.paused:
                self.wait_while_paused(interval)
            elif records := self._poll():
                self._send_batch(records)
            else:
                # A task that returns at once with nothing must not spin a core (and the GIL).
                self.stopping.wait(0.005)
            if self.submitted.error is not None:
                raise ConnectError(f"producing failed: {self.submitted.error}")
            if time.monotonic() >= next_commit:
                self.commit_offsets()
                next_commit = time.monotonic() + interval

    def _poll(self) -> list[SourceRecord] | None:
        assert self.task is not None
        try:
            return self.task.poll()
        except RetriableError as exc:
            log.warning("poll failed, retrying", extra={**self.log_extra, "error": str(exc)})
            self.stopping.wait(0.1)
            return None

    def _send_batch(self, records: list[SourceRecord]) -> None:
        """Produces one poll result; its offsets become committable once all of it is acked."""
        batch = self.submitted.begin()
        if self._identity and not self._wants_commit_record:
            self._send_fast(records, batch)
        else:
            for record in records:
                self._send(record, batch)
        self.submitted.seal(batch, records if self._wants_commit_records else None)

    def _send_fast(self, records: list[SourceRecord], batch: SubmittedBatch) -> None:
        """The hot path: no transforms, no per-record hook, converters called directly.

        A record whose conversion raises goes through ``_send`` instead, which applies the
        connector's error policy (retries, tolerance, dead-letter queue) exactly as if the
        fast path did not exist; the converters are pure, so converting it again is harmless.
        """
        conv = self.converters
        assert conv is not None
        key_from, value_from = conv.key.from_connect, conv.value.from_connect
        headers_of = self._headers
        key_encoding = conv.key.encoding if type(conv.key) is StringConverter else None
        value_encoding = conv.value.encoding if type(conv.value) is StringConverter else None
        produce, on_delivery = self.services.producer.produce, batch.on_delivery
        offsets, key_of, seen = batch.offsets, self.submitted.key, self._topics_seen
        last_partition: Any = None
        partition_key_: Any = None
        for record in records:
            topic = record.topic
            try:
                # StringConverter inlined for the common cases (None, str); else the converter.
                key = record.key
                if key_encoding is None or (key is not None and type(key) is not str):
                    key = key_from(topic, record.key_schema, key)
                elif key is not None:
                    key = key.encode(key_encoding)
                value = record.value
                if value_encoding is None or (value is not None and type(value) is not str):
                    value = value_from(topic, record.value_schema, value)
                elif value is not None:
                    value = value.encode(value_encoding)
                headers = headers_of(record) if record.headers else None
            except Exception:
                self._send(record, batch)
                continue
            source_partition = record.source_partition
            if source_partition is not last_partition:
                partition_key_ = key_of(source_partition)
                last_partition = source_partition
            offsets[partition_key_] = (source_partition, record.source_offset)
            if topic not in seen:
                self._ensure_topic(topic)
            if record.partition is None:
                timestamp = record.timestamp
                try:
                    if timestamp is None:
                        if headers:
                            produce(topic, value, key, on_delivery=on_delivery, headers=headers)
                        else:
                            produce(topic, value, key, on_delivery=on_delivery)
                    elif headers:
                        produce(topic, value, key, on_delivery=on_delivery, timestamp=timestamp,
                                headers=headers)  # fmt: skip
                    else:
                        produce(topic, value, key, on_delivery=on_delivery, timestamp=timestamp)
                    batch.produced += 1
                    continue
                except BufferError:
                    pass
            self._produce(record, (key, value, headers or []), on_delivery)
            batch.produced += 1

    def _send(self, record: SourceRecord, batch: SubmittedBatch) -> None:
        """One record through the error-handling path (transforms, converters, hooks)."""
        assert self.converters is not None and self.task is not None
        batch.note(record.source_partition, record.source_offset)
        if self._identity:
            ok, transformed = True, record
        else:
            ok, transformed = self.errors.run(
                "TRANSFORMATION", self.chain, self.chain.apply, record, source=record
            )
        if not ok or transformed is None:
            if self._wants_commit_record:
                self.task.commit_record(record, None)
            return
        out = self._convert(transformed)
        if out is None:
            return
        self._ensure_topic(transformed.topic)
        on_delivery: Any = batch.on_delivery
        if self._wants_commit_record:
            on_delivery = self._commit_record_callback(record, batch)
        self._produce(transformed, out, on_delivery)
        batch.produced += 1

    def _commit_record_callback(self, original: SourceRecord, batch: SubmittedBatch) -> Any:
        task = self.task
        assert task is not None

        def on_delivery(err: KafkaError | None, msg: Any) -> None:
            batch.on_delivery(err, msg)
            if err is None:
                try:
                    task.commit_record(original, msg.offset())
                except Exception:
                    log.exception("commit_record failed", extra=self.log_extra)

        return on_delivery

    def _convert(self, record: SourceRecord) -> tuple[Any, Any, list[Any]] | None:
        conv, topic, run = self.converters, record.topic, self.errors.run
        assert conv is not None
        ok, key = run(
            "KEY_CONVERTER", conv.key, conv.key.from_connect, topic, record.key_schema,
            record.key, source=record,
        )  # fmt: skip
        if not ok:
            return None
        ok, value = run(
            "VALUE_CONVERTER", conv.value, conv.value.from_connect, topic, record.value_schema,
            record.value, source=record,
        )  # fmt: skip
        if not ok:
            return None
        headers: list[Any] | None = []
        if record.headers:
            ok, headers = run("HEADER_CONVERTER", conv.header, self._headers, record, source=record)
            if not ok:
                return None
        return key, value, headers or []

    def _headers(self, record: SourceRecord) -> list[tuple[str, bytes | None]]:
        from_connect = self.converters.header.from_connect  # type: ignore[union-attr]
        topic = record.topic
        if not self._text_headers:
            return [(h.key, from_connect(topic, h.key, h.schema, h.value)) for h in record.headers]
        # The built-in header converters write str and int values as their text, as here
        # (bool is not int for ``type(...) is``): no converter call for the common cases.
        out: list[tuple[str, bytes | None]] = []
        append = out.append
        for h in record.headers:
            value = h.value
            kind = type(value)
            if kind is str:
                append((h.key, value.encode()))
            elif kind is int:
                append((h.key, b"%d" % value))
            else:
                append((h.key, from_connect(topic, h.key, h.schema, value)))
        return out

    def _produce(
        self, record: SourceRecord, data: tuple[Any, Any, list[Any]], on_delivery: Any
    ) -> None:
        """Hands one converted record to the producer, waiting while its queue is full."""
        key, value, headers = data
        kwargs: dict[str, Any] = {"key": key, "value": value, "on_delivery": on_delivery}
        if headers:
            kwargs["headers"] = headers
        if record.partition is not None:
            kwargs["partition"] = record.partition
        if record.timestamp is not None:
            kwargs["timestamp"] = record.timestamp
        while True:
            try:
                self.services.producer.produce(record.topic, **kwargs)
                return
            except BufferError:
                # The producer's queue is full: the worker's poll thread drains it.
                self.stopping.wait(0.005)

    def _commit_records(self, records: list[SourceRecord]) -> None:
        try:
            self.task.commit_records(records)  # type: ignore[union-attr]
        except Exception:
            log.exception("commit_records failed", extra=self.log_extra)

    def _ensure_topic(self, topic: str) -> None:
        if topic in self._topics_seen:
            return
        config = self.connector_config
        self.services.admin.ensure(
            topic,
            int(config.get("topic.creation.default.partitions", -1)),
            int(config.get("topic.creation.default.replication.factor", -1)),
        )
        self.services.status_store.put_topic(self.id.connector, topic, self.id.task)
        self._topics_seen.add(topic)

    def commit_offsets(self, wait: float = 0.0) -> bool:
        """Stores the committable offsets; with ``wait``, first waits for outstanding acks."""
        if wait and not self.submitted.await_all(wait):
            log.warning(
                "records still unacknowledged at commit",
                extra={**self.log_extra, "outstanding": self.submitted.outstanding},
            )
        offsets = self.submitted.committable()
        if not offsets:
            return True
        try:
            self.services.offset_store.put(self.id.connector, offsets)
        except Exception:
            log.exception("offset commit failed", extra=self.log_extra)
            return False
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
