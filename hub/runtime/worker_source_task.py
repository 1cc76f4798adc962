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
A ``SourceRecordBatch`` in a poll result goes further (``_send_columns``): its values are
produced as they are when the value converter would give exactly those bytes, its shared
headers are converted once, and only its last offset is noted; anything else about it (a
transform, a hook, a converter that would change the bytes, a conversion error) turns it into
ordinary records first, so the result is the same either way.
"""

from __future__ import annotations

import codecs
import functools
import logging
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from operator import length_hint
from typing import Any

from confluent_kafka import KafkaError

from hub.api import ConnectError, RetriableError, SourceRecord, SourceRecordBatch, SourceTask
from hub.api.schema import Type
from hub.api.source import PollResult, as_records
from hub.converters.bytes import ByteArrayConverter
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

# Codecs in which bytes that decode without error encode back to the very same bytes, and in
# which an ASCII separator cannot be part of a multi-byte character (so validating the values
# joined by b"\n" validates each of them).
_SAME_BYTES_CODECS = frozenset({"utf-8", "ascii", "iso8859-1"})


@functools.lru_cache(maxsize=64)
def _codec(name: str) -> str | None:
    """The canonical name of an encoding (``"UTF-8"`` and ``"utf8"`` are one codec)."""
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


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
            elif result := self._poll():
                self._send_batch(result)
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
        try:
            return self.task.poll()
        except RetriableError as exc:
            log.warning("poll failed, retrying", extra={**self.log_extra, "error": str(exc)})
            self.stopping.wait(0.1)
            return None

    def _send_batch(self, result: Sequence[Any] | SourceRecordBatch) -> None:
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
        fast = self._identity and not self._wants_commit_record
        if columnar and (not fast or self._wants_commit_records):
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
        self.submitted.seal(batch, items if self._wants_commit_records else None)

    def _send_columns(self, item: SourceRecordBatch, batch: SubmittedBatch) -> None:
        """Produces a batch straight from its columns: no record objects, each value as it is,
        the shared headers converted once, one offset noted for the whole batch.

        Only where the bytes are exactly what converting each record would give (see
        ``_column_values``); otherwise, or if a converter raises, the batch's ``records()``
        take ``_send_fast`` (and from there the error-handling path)."""
        n = len(item)
        if not n:
            return
        columns = self._columns(item)
        if columns is None:
            self._send_fast(item.records(), batch)
            return
        values, keys, headers = columns
        topic = item.topic
        if topic not in self._topics_seen:
            self._ensure_topic(topic)
        batch.note(item.source_partition, item.last_offset())
        partition = -1 if item.partition is None else item.partition  # -1: the partitioner
        stamps = item.timestamps
        stamp_list = None if stamps is None else [0 if t is None else t for t in stamps]
        produce, on_delivery = self.services.producer.produce, batch.on_delivery
        # produce(topic, value, key, partition, callback, on_delivery, timestamp, headers),
        # positionally, mapped over the columns: the per-record loop runs in C. (``callback``
        # is the delivery callback's primary name: a None there would hide ``on_delivery``.)
        value_it = iter(values)
        args = (
            repeat(topic),
            value_it,
            repeat(None) if keys is None else iter(keys),
            repeat(partition),
            repeat(on_delivery),
            repeat(None),
            repeat(0) if stamp_list is None else iter(stamp_list),
            headers if type(headers) is repeat else iter(headers),
        )
        while True:
            try:
                deque(map(produce, *args), 0)
                break
            except BufferError:
                # The producer's queue is full: the worker's poll thread drains it. Record
                # ``i`` was taken from every column but not produced; the rest follow it.
                i = n - length_hint(value_it) - 1
                row = (
                    topic, values[i], None if keys is None else keys[i], partition,
                    on_delivery, None, 0 if stamp_list is None else stamp_list[i],
                    next(iter(headers)) if type(headers) is repeat else headers[i],
                )  # fmt: skip
                while True:
                    self.stopping.wait(0.005)
                    try:
                        produce(*row)
                        break
                    except BufferError:
                        continue
        batch.produced += n

    def _columns(self, item: SourceRecordBatch) -> tuple[list[Any], list[Any] | None, Any] | None:
        """(values, keys, per-record headers) as the producer takes them, or None when the
        batch must go through records."""
        conv = self.converters
        assert conv is not None
        values = self._column_values(item, conv.value)
        if values is None:
            return None
        try:
            keys = None
            if item.keys is not None:
                key_from, topic, schema = conv.key.from_connect, item.topic, item.key_schema
                keys = [key_from(topic, schema, k) for k in item.keys]
            headers = self._column_headers(item)
        except Exception:
            return None
        return values, keys, headers

    @staticmethod
    def _column_values(item: SourceRecordBatch, conv: Any) -> list[Any] | None:
        """The converted values, when the converter is one whose result is known without
        calling it per record; None otherwise (or when a value would not convert)."""
        values = item.values
        kinds = set(map(type, values))
        kind = type(conv)
        if kind is StringConverter:
            if kinds == {str}:
                try:
                    return list(map(str.encode, values, repeat(conv.encoding)))
                except UnicodeError:
                    return None
            if kinds != {bytes}:
                return None
            if item.encoding is not None:
                # Records would carry ``value.decode(encoding, "replace")``, which the
                # converter encodes again: the same bytes exactly when they are valid.
                codec = _codec(item.encoding)
                if codec != _codec(conv.encoding) or codec not in _SAME_BYTES_CODECS:
                    return None
                joined = b"\n".join(values)
                if codec != "iso8859-1" and not joined.isascii():
                    try:
                        joined.decode(codec)
                    except UnicodeDecodeError:
                        return None
            # (StringConverter sends bytes values as they are.)
            return values if type(values) is list else list(values)
        if kind is ByteArrayConverter:
            schema = item.value_schema
            if item.encoding is not None or kinds != {bytes}:
                return None
            if schema is not None and schema.type is not Type.BYTES:
                return None
            return values if type(values) is list else list(values)
        return None

    def _column_headers(self, item: SourceRecordBatch) -> Any:
        """Each record's headers for ``produce``: ``repeat(...)`` when they are all the same,
        else a list. A dict where the keys are distinct (the producer takes one faster than
        a list of pairs; it writes the same headers in the same order)."""
        from_connect = self.converters.header.from_connect  # type: ignore[union-attr]
        topic = item.topic
        shared = [(h.key, from_connect(topic, h.key, h.schema, h.value)) for h in item.headers]
        names = [k for k, _ in shared] + [k for k, _ in item.header_columns]
        if not names:
            return repeat(None)
        unique = len(set(names)) == len(names)
        if not item.header_columns:
            return repeat(dict(shared) if unique else shared)
        columns: list[list[Any]] = []
        for key, column in item.header_columns:
            kinds = {int} if type(column) is range else set(map(type, column))
            if self._text_headers and kinds == {int}:
                columns.append(list(map(b"%d".__mod__, column)))
            elif self._text_headers and kinds == {str}:
                columns.append(list(map(str.encode, column)))
            else:
                columns.append([from_connect(topic, key, None, v) for v in column])
        keys = [k for k, _ in item.header_columns]
        if not unique:
            pairs = [
                list(zip(repeat(k), c, strict=True)) for k, c in zip(keys, columns, strict=True)
            ]
            return [[*shared, *row] for row in zip(*pairs, strict=True)]
        const = dict(shared)
        if len(columns) == 1:
            (k0,), (c0,) = keys, columns
            return [{**const, k0: a} for a in c0]
        if len(columns) == 2:
            (k0, k1), (c0, c1) = keys, columns
            return [{**const, k0: a, k1: b} for a, b in zip(c0, c1, strict=True)]
        return [
            {**const, **dict(zip(keys, row, strict=True))} for row in zip(*columns, strict=True)
        ]

    def _send_fast(self, records: Sequence[SourceRecord], batch: SubmittedBatch) -> None:
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

    def _commit_records(self, records: Sequence[SourceRecord]) -> None:
        try:
            self.task.commit_records(records)  # type: ignore[union-attr,arg-type]
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
