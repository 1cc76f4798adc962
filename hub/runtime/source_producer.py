"""``SourceProducer``: one poll result -> transforms -> converters -> the worker's producer.

The one component that turns what a source task polled into ``Producer.produce`` calls, so the
task class keeps only its lifecycle, polling and offset commits. Three ways through it, chosen
per poll result and always giving the same records on the wire:

- the error-handling path (``_send``): transforms, converters and the per-record
  ``commit_record`` hook, each stage under the connector's error policy (retries,
  ``errors.tolerance``, dead-letter queue);
- the per-record fast path (``_send_fast``), with no transforms and no per-record hook: the
  converters called directly, ``str`` values encoded inline when the converter's raw form is
  text, one shared delivery callback per poll; a record whose conversion raises falls back to
  ``_send`` (converters are pure, so converting it again is harmless);
- the columnar path for a ``SourceRecordBatch`` (``source_columns``): its values produced as
  they are when the converter's raw form says they already are its bytes. Anything else about
  the batch (a transform, a hook, a converter without that raw form, a conversion error) turns
  it into records first;
- for a task with a ``commit_batch`` hook, each batch is tracked by a ``BatchAcks`` (the same
  two ways: columns when it names its partition, records otherwise) that gives the task every
  record's Kafka offset once the batch is acknowledged.

A record for a partition the producer does not know yet (a topic that just grew) refreshes the
producer's metadata and is tried again for up to ``NEW_PARTITION_WAIT`` seconds.

Only converters' declared raw forms (``hub.api.RawForm``, ``HeaderRawForm``) decide the fast
paths: a third-party converter gets them by declaring its form, and no class is special here.

Threads: ``send`` runs on the task's thread; delivery callbacks on the worker's producer
thread (see ``SubmittedRecords``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from hub.api import SourceRecord, SourceRecordBatch, SourceTask
from hub.api.source import as_records
from hub.runtime import source_columns
from hub.runtime.batch_acks import BatchAcks
from hub.runtime.error_handling import RetryWithToleranceOperator
from hub.runtime.plugin_setup import Chain, IdentityChain, RecordConverters
from hub.runtime.submitted_records import SubmittedBatch, SubmittedRecords

log = logging.getLogger(__name__)

# How long a record for a partition the producer does not know yet waits for it to appear.
NEW_PARTITION_WAIT = 30.0


class SourceProducer:
    """Produces poll results of one source task; not thread-safe (the task's thread)."""

    def __init__(
        self,
        *,
        task: SourceTask,
        converters: RecordConverters,
        chain: Chain,
        errors: RetryWithToleranceOperator,
        producer: Any,
        submitted: SubmittedRecords,
        ensure_topic: Callable[[str], None],
        stopping: threading.Event,
        log_extra: dict[str, Any],
    ) -> None:
        """``ensure_topic(topic)`` is called once per topic before its first record."""
        self.task = task
        self.converters = converters
        self.chain = chain
        self.errors = errors
        self.producer = producer
        self.submitted = submitted
        self.stopping = stopping
        self.log_extra = log_extra
        self._ensure_topic = ensure_topic
        self.topics_seen: set[str] = set()
        self._identity = isinstance(chain, IdentityChain)
        cls = type(task)
        # Per-record callbacks into the task only if it overrides the optional hooks.
        self.wants_commit_record = cls.commit_record is not SourceTask.commit_record
        self.wants_commit_records = cls.commit_records is not SourceTask.commit_records
        self.wants_commit_batch = cls.commit_batch is not SourceTask.commit_batch
        self.defer_record_hooks = False
        """Exactly-once tasks: the per-record and per-batch hooks are collected on the batch
        (``SubmittedBatch.deferred``) for the task to call once its transaction committed."""
        self._key_form = converters.key.raw_form()
        self._value_form = converters.value.raw_form()
        self._text_headers = converters.header.raw_form().text

    def ensure_topic(self, topic: str) -> None:
        if topic not in self.topics_seen:
            self._ensure_topic(topic)
            self.topics_seen.add(topic)

    def send(self, result: Sequence[Any] | SourceRecordBatch) -> SubmittedBatch:
        """Produces one poll result; its offsets become committable once all of it is acked.

        ``SourceRecordBatch`` items are produced from their columns on the fast path, and
        turned into records (``as_records``) wherever records are needed: transforms, the
        per-record hook, the ``commit_records`` hook (which gets the expanded list)."""
        if isinstance(result, SourceRecordBatch):
            items: Sequence[Any] = [result]
            columnar = True
        else:
            items = result
            columnar = any(issubclass(kind, SourceRecordBatch) for kind in set(map(type, items)))
        fast = self._identity and not self.wants_commit_record
        if columnar and self.wants_commit_batch:
            batch = self.submitted.begin()
            self._send_acked(items, batch)
            expanded = as_records(result) if self.wants_commit_records else None
            self.submitted.seal(batch, expanded)
            return batch
        if columnar and (not fast or self.wants_commit_records):
            items, columnar = as_records(result), False
        batch = self.submitted.begin()
        if not fast:
            for record in items:
                self._send(record, batch)
        elif not columnar:
            self._send_fast(items, batch)
        else:
            run: list[SourceRecord] = []
            for item in items:
                if isinstance(item, SourceRecordBatch):
                    if run:
                        self._send_fast(run, batch)
                        run = []
                    self._send_columns(item, batch)
                else:
                    run.append(item)
            if run:
                self._send_fast(run, batch)
        self.submitted.seal(batch, items if self.wants_commit_records else None)
        return batch

    def _send_acked(self, items: Sequence[Any], batch: SubmittedBatch) -> None:
        """A poll result of a task with a ``commit_batch`` hook: each ``SourceRecordBatch``
        tracked by a ``BatchAcks`` (its columns produced as they are when the batch names its
        partition, else record by record with a callback each); other records as usual."""
        hook: Any = self.task.commit_batch
        if self.defer_record_hooks:  # exactly-once: after the transaction commits
            task_hook = hook

            def hook(item: SourceRecordBatch, offsets: Sequence[int | None]) -> None:
                batch.defer(lambda: task_hook(item, offsets))

        fast = self._identity and not self.wants_commit_record
        run: list[SourceRecord] = []
        for item in items:
            if not isinstance(item, SourceRecordBatch):
                run.append(item)
                continue
            if run:
                self._send_records(run, batch, fast)
                run = []
            acks = BatchAcks(item, hook, batch.on_delivery, self.log_extra)
            data = None
            if self._identity and item.partition is not None and len(item):
                conv = self.converters
                data = source_columns.columns(
                    item, conv.key, self._value_form, conv.header, self._text_headers
                )
            if data is not None:
                self._produce_columns(item, batch, data, acks.on_delivery)
                acks.seal(len(item))
                continue
            produced = 0
            for i, record in enumerate(item.records()):
                produced += self._send(record, batch, acks.callback(i))
            acks.seal(produced)
        if run:
            self._send_records(run, batch, fast)

    def _send_records(
        self, records: Sequence[SourceRecord], batch: SubmittedBatch, fast: bool
    ) -> None:
        if fast:
            self._send_fast(records, batch)
        else:
            for record in records:
                self._send(record, batch)

    def _send_columns(self, item: SourceRecordBatch, batch: SubmittedBatch) -> None:
        """A batch straight from its columns (``source_columns``), one offset noted for it."""
        if not len(item):
            return
        conv = self.converters
        data = source_columns.columns(
            item, conv.key, self._value_form, conv.header, self._text_headers
        )
        if data is None:
            self._send_fast(item.records(), batch)
            return
        self._produce_columns(item, batch, data, batch.on_delivery)

    def _produce_columns(
        self,
        item: SourceRecordBatch,
        batch: SubmittedBatch,
        data: source_columns.Columns,
        on_delivery: Callable[[Any, Any], None],
    ) -> None:
        if item.topic not in self.topics_seen:
            self.ensure_topic(item.topic)
        batch.note(item.source_partition, item.last_offset())
        deadline: list[float] = []

        def retry(exc: KafkaException, topic: str) -> bool:
            if not deadline:
                deadline.append(time.monotonic() + NEW_PARTITION_WAIT)
            return self._new_partition(exc, topic, deadline[0])

        source_columns.produce_columns(
            self.producer.produce, item, data, on_delivery, self.stopping, retry
        )
        batch.produced += len(data[0])

    def _new_partition(self, exc: KafkaException, topic: str, deadline: float) -> bool:
        """True (after refreshing the producer's metadata of ``topic``) if ``exc`` is about a
        partition the producer does not know: a topic that just grew. librdkafka learns new
        partitions only on a metadata refresh (every 5 minutes by default), so producing to
        one at once fails with _UNKNOWN_PARTITION; ``list_topics`` refreshes the cache. False
        for any other error, or once ``deadline`` passed (the partition really is missing)."""
        err = exc.args[0] if exc.args else None
        if not isinstance(err, KafkaError) or err.code() != KafkaError._UNKNOWN_PARTITION:
            return False
        if time.monotonic() > deadline:
            return False
        with contextlib.suppress(KafkaException):  # the next attempt tells
            self.producer.list_topics(topic, timeout=5)
        self.stopping.wait(0.1)
        return True

    def _send_fast(self, records: Sequence[SourceRecord], batch: SubmittedBatch) -> None:
        """The hot path: no transforms, no per-record hook, converters called directly."""
        conv = self.converters
        key_from, value_from = conv.key.from_connect, conv.value.from_connect
        headers_of = self._headers
        key_form, value_form = self._key_form, self._value_form
        key_encoding = key_form.encoding if key_form.kind == "text" else None
        value_encoding = value_form.encoding if value_form.kind == "text" else None
        produce, on_delivery = self.producer.produce, batch.on_delivery
        offsets, key_of, seen = batch.offsets, self.submitted.key, self.topics_seen
        last_partition: Any = None
        partition_key_: Any = None
        for record in records:
            topic = record.topic
            try:
                # A text raw form inlined for the common cases (None, str); else the converter.
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
                self.ensure_topic(topic)
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

    def _send(self, record: SourceRecord, batch: SubmittedBatch, acked: Any = None) -> bool:
        """One record through the error-handling path (transforms, converters, hooks); True
        if it was produced. ``acked``: the delivery callback of a record of a batch whose task
        has ``commit_batch`` (which then stands in for ``commit_record``)."""
        batch.note(record.source_partition, record.source_offset)
        per_record = self.wants_commit_record and acked is None
        transformed: SourceRecord | None
        if self._identity:
            ok, transformed = True, record
        else:
            ok, transformed = self.errors.run(
                "TRANSFORMATION", self.chain, self.chain.apply, record, source=record
            )
        if not ok or transformed is None:
            if per_record:
                self.task.commit_record(record, None)
            return False
        out = self._convert(transformed)
        if out is None:
            return False
        self.ensure_topic(transformed.topic)
        on_delivery: Any = batch.on_delivery if acked is None else acked
        if per_record:
            on_delivery = self._commit_record_callback(record, batch)
        self._produce(transformed, out, on_delivery)
        batch.produced += 1
        return True

    def _commit_record_callback(self, original: SourceRecord, batch: SubmittedBatch) -> Any:
        task = self.task
        if self.defer_record_hooks:  # exactly-once: called only after the transaction commits

            def deferred(err: KafkaError | None, msg: Any) -> None:
                batch.on_delivery(err, msg)
                if err is None:
                    offset = msg.offset()
                    batch.defer(lambda: task.commit_record(original, offset))

            return deferred

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
        from_connect = self.converters.header.from_connect
        topic = record.topic
        if not self._text_headers:
            return [(h.key, from_connect(topic, h.key, h.schema, h.value)) for h in record.headers]
        # A text header form writes str and int values as their text, as here (bool is not
        # int for ``type(...) is``): no converter call for the common cases.
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
        deadline = time.monotonic() + NEW_PARTITION_WAIT
        while True:
            try:
                self.producer.produce(record.topic, **kwargs)
                return
            except BufferError:
                # The producer's queue is full: the worker's poll thread drains it.
                self.stopping.wait(0.005)
            except KafkaException as exc:
                if not self._new_partition(exc, record.topic, deadline):
                    raise
