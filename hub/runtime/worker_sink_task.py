"""Runs one SinkTask: consume in group ``connect-<name>`` -> converters -> transforms -> put.

Offsets: ``current`` holds, per assigned partition, the next offset after the records handed
to ``put`` (or skipped as tolerated failures / dropped by a transform). Every
``offset.flush.interval.ms`` (or on ``context.request_commit()``), on revocation and on stop,
the task's ``pre_commit(current)`` decides what is durable, and only those offsets are
committed, synchronously. A crash therefore redelivers everything the task had not confirmed.

Threading: the consumer, and so every rebalance callback (``open``/``close``), runs on the
task's thread. A connector PAUSE pauses every assigned partition but keeps polling, so the
task keeps its group membership and its assignment. ``put`` raising ``RetriableError`` gets
the same batch again after a backoff; any other exception fails the task. Every poll calls
``put``, with an empty batch when nothing arrived (about every 100 ms while idle).

Batches: with no transform configured, a poll's messages go to ``put`` as a
``SinkRecordBatch`` (hub.api.sink): the records are built only if the task looks at them,
and a task that writes the consumed bytes reads them as columns. The columns and the
per-partition offsets come from C-level maps over the messages (no Python frame per message);
anything unusual in a poll (an error message, a partition no longer assigned, a topic seen for
the first time) takes the record-by-record path instead.
"""

from __future__ import annotations

import codecs
import logging
import time
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from confluent_kafka import Consumer, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from hub.api import (
    ConnectError,
    Header,
    RetriableError,
    SinkRecord,
    SinkTask,
    TimestampType,
    TopicPartition,
)
from hub.api.schema import OPTIONAL_BYTES_SCHEMA, OPTIONAL_STRING_SCHEMA
from hub.api.sink import OTHER_CONVERSION, RawConversion, SinkRecordBatch
from hub.api.slots import slot_setters
from hub.converters.bytes import ByteArrayConverter
from hub.converters.headers import SimpleHeaderConverter, StringHeaderConverter
from hub.converters.json import JsonConverter
from hub.converters.string import StringConverter
from hub.converters.values import _INT_SCHEMAS
from hub.runtime.error_handling import (
    ErrorHandlingConfig,
    FailureContext,
    RetryWithToleranceOperator,
)
from hub.runtime.plugin_setup import (
    IdentityChain,
    build_converters,
    build_transform_chain,
    close_chain,
)
from hub.runtime.worker_task import ConnectorTaskId, TaskServices, TaskStatusListener, WorkerTask

log = logging.getLogger(__name__)

_TIMESTAMP_TYPES = {0: TimestampType.NO_TIMESTAMP, 1: TimestampType.CREATE_TIME,
                    2: TimestampType.LOG_APPEND_TIME}  # fmt: skip
# Header values safe to share between records (a cached Header is handed out many times).
_IMMUTABLE = frozenset({str, int, float, bool, type(None), bytes, Decimal})
_HEADER_CACHE_MAX = 4096


_SINK_FIELD_ORDER = ("topic", "partition", "key", "value", "key_schema", "value_schema",
                     "timestamp", "headers", "offset", "timestamp_type")  # fmt: skip
_SINK_SETTERS = slot_setters(SinkRecord, _SINK_FIELD_ORDER)


def new_sink_record(
    topic: str, partition: int, key: Any, value: Any, key_schema: Any, value_schema: Any,
    timestamp: int | None, headers: tuple[Header, ...], offset: int,
    timestamp_type: TimestampType,
) -> SinkRecord:  # fmt: skip
    """``SinkRecord(...)`` with these fields, built through the slot setters when possible."""
    if _SINK_SETTERS is None:
        return SinkRecord(topic=topic, partition=partition, key=key, value=value,
                          key_schema=key_schema, value_schema=value_schema,
                          timestamp=timestamp, headers=headers, offset=offset,
                          timestamp_type=timestamp_type)  # fmt: skip
    record = object.__new__(SinkRecord)
    s = _SINK_SETTERS
    s[0](record, topic)
    s[1](record, partition)
    s[2](record, key)
    s[3](record, value)
    s[4](record, key_schema)
    s[5](record, value_schema)
    s[6](record, timestamp)
    s[7](record, headers)
    s[8](record, offset)
    s[9](record, timestamp_type)
    return record


def _header_maker() -> Any:
    """``Header(key, value, schema)`` through its slot setters (~3x cheaper than the frozen
    dataclass ``__init__``); the constructor itself if Header is not shaped so."""
    setters = slot_setters(Header, ("key", "value", "schema"))
    if setters is None:
        return Header
    set_key, set_value, set_schema = setters
    new = object.__new__

    def make(key: str, value: Any, schema: Any) -> Header:
        header = new(Header)
        set_key(header, key)
        set_value(header, value)
        set_schema(header, schema)
        return header

    return make


new_header = _header_maker()

# Converters whose to_connect is a plain decode with a fixed schema: the hot path inlines them.
_PLAIN, _TEXT, _RAW = 0, 1, 2


def _decoding(converter: Any) -> tuple[int, Any, str]:
    """(kind, schema, encoding) of a built-in converter the hot path can inline."""
    kind = type(converter)
    if kind is StringConverter:
        return _TEXT, OPTIONAL_STRING_SCHEMA, converter.encoding
    if kind is ByteArrayConverter:
        return _RAW, OPTIONAL_BYTES_SCHEMA, ""
    return _PLAIN, None, ""


def raw_conversion(converter: Any) -> RawConversion:
    """How a key/value converter relates to the consumed bytes, for ``SinkRecordBatch``."""
    kind, _, encoding = _decoding(converter)
    if kind == _TEXT:
        return RawConversion("text", codecs.lookup(encoding).name, null_safe=True)
    if kind == _RAW:
        return RawConversion("bytes", null_safe=True)
    if type(converter) is JsonConverter:
        return RawConversion("other", null_safe=True)
    return OTHER_CONVERSION


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
        self._topics_seen: set[str] = set()
        self.chain: Any = None
        self.reporter = _ErrantRecordReporter(self)
        self._batch_messages: list[Message] = []  # of the batch being delivered, for reporter

    def initialize(self) -> None:
        registry, worker = self.services.registry, self.services.worker_config
        self.converters = build_converters(registry, worker, self.connector_config)
        self.chain = build_transform_chain(registry, self.connector_config)
        self._identity = isinstance(self.chain, IdentityChain)
        header_type = type(self.converters.header)
        pure = header_type in (SimpleHeaderConverter, StringHeaderConverter)
        self._header_cache: dict[tuple[str, bytes | None], Header] | None = {} if pure else None
        self._int_headers = header_type is SimpleHeaderConverter
        self._key_conversion = raw_conversion(self.converters.key)
        self._value_conversion = raw_conversion(self.converters.value)
        # The built-in header converters decode with errors="replace" and never fail: a sink
        # may read raw header bytes and convert only the ones it needs.
        self._convert_header = self._header_value if pure else None
        overrides = {
            k[len("consumer.override.") :]: v
            for k, v in self.connector_config.items()
            if k.startswith("consumer.override.")
        }
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
            # plain (topic, partition) tuples: hashed in C, this loop runs per record
            offsets: dict[tuple[str, int], int] = {}
            batch = self._batch(messages, offsets)
            self._batch_messages = messages
            # An idle poll still calls put([]), as Kafka Connect does: a sink that rolls files
            # or batches on time (rotate.schedule.interval.ms) can close a quiet one promptly.
            if self._deliver(batch):
                for (topic, partition), offset in offsets.items():
                    self.current[TopicPartition(topic, partition)] = offset
            if self.commit_requested or time.monotonic() >= next_commit:
                self.commit_requested = False
                try:
                    self.commit(self.assignment)
                except KafkaException as exc:
                    # e.g. a rebalance in progress: the next interval (or close) retries;
                    # nothing is lost, the uncommitted records are only redelivered.
                    log.warning("offset commit failed", extra={**self.log_extra, "error": str(exc)})
                next_commit = time.monotonic() + interval

    def _batch(
        self, messages: list[Message], offsets: dict[tuple[str, int], int]
    ) -> list[SinkRecord] | SinkRecordBatch:
        """What ``put`` gets for one consume; ``offsets`` gets each partition's next offset.

        A lazy ``SinkRecordBatch`` when every message is a record of an assigned partition of
        a topic already seen and no transform is configured; else the records (``_records``).
        """
        if not messages or not self._identity or any(map(Message.error, messages)):
            return self._records(messages, offsets)
        topics: list[str] = list(map(Message.topic, messages))  # type: ignore[arg-type]
        partitions: list[int] = list(map(Message.partition, messages))  # type: ignore[arg-type]
        first = (topics[0], partitions[0])
        if len(set(partitions)) == 1 and len(set(topics)) == 1:
            keys = None  # one partition: no per-message tuples
            if first not in self._assigned_keys or first[0] not in self._topics_seen:
                return self._records(messages, offsets)
        else:
            keys = list(zip(topics, partitions, strict=True))
            if not (self._assigned_keys.issuperset(keys) and self._topics_seen.issuperset(topics)):
                return self._records(messages, offsets)
        numbers: list[int] = list(map(Message.offset, messages))  # type: ignore[arg-type]
        if keys is None:
            offsets[first] = numbers[-1] + 1
        else:  # the last message of each partition gives its next offset, as _records does
            offsets.update(zip(keys, map((1).__add__, numbers), strict=True))
        return SinkRecordBatch(
            messages,
            topics,
            partitions,
            numbers,
            build=lambda: self._records(messages, {}),
            key_conversion=self._key_conversion,
            value_conversion=self._value_conversion,
            convert_header=self._convert_header,
        )

    def _header_value(self, topic: str, key: str, data: bytes | None) -> Any:
        return self.converters.header.to_connect(topic, key, data).value

    def _records(
        self, messages: list[Message], offsets: dict[tuple[str, int], int]
    ) -> list[SinkRecord]:
        """The records for ``put`` from one consume; ``offsets`` gets each partition's next.

        The hot path calls the converters directly; a message whose conversion raises (or any
        message, when transforms are configured) goes through ``_convert``, which applies
        the connector's error policy. Converters are pure, so converting again is harmless.
        """
        batch: list[SinkRecord] = []
        append, assigned = batch.append, self._assigned_keys
        conv = self.converters
        key_to, value_to, headers_of = conv.key.to_connect, conv.value.to_connect, self._headers
        fast, seen, types = self._identity, self._topics_seen, _TIMESTAMP_TYPES
        key_kind, key_schema, key_encoding = _decoding(conv.key)
        value_kind, value_schema, value_encoding = _decoding(conv.value)
        for msg in messages:
            if msg.error() is not None:
                self._on_consume_error(msg)
                continue
            topic: str = msg.topic()  # type: ignore[assignment]
            partition: int = msg.partition()  # type: ignore[assignment]
            tp = (topic, partition)
            if tp not in assigned:
                continue
            offset: int = msg.offset()  # type: ignore[assignment]
            offsets[tp] = offset + 1
            if fast and topic in seen:
                try:
                    data = msg.key()
                    if key_kind == _TEXT:
                        key = None if data is None else data.decode(key_encoding)
                    elif key_kind == _RAW:
                        key = data
                    else:
                        converted = key_to(topic, data)
                        key, key_schema = converted.value, converted.schema
                    data = msg.value()
                    if value_kind == _TEXT:
                        value = None if data is None else data.decode(value_encoding)
                    elif value_kind == _RAW:
                        value = data
                    else:
                        converted = value_to(topic, data)
                        value, value_schema = converted.value, converted.schema
                    raw_headers = msg.headers()
                    headers = headers_of(topic, raw_headers) if raw_headers else ()
                except Exception:
                    pass
                else:
                    ts_type, ts = msg.timestamp()
                    append(
                        new_sink_record(
                            topic, partition, key, value, key_schema, value_schema,
                            ts if ts_type else None, headers, offset,
                            types.get(ts_type, TimestampType.NO_TIMESTAMP),
                        )
                    )  # fmt: skip
                    continue
            record = self._convert(msg)
            if record is not None:
                append(record)
        return batch

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

    def _on_consume_error(self, msg: Message) -> None:
        err = msg.error()
        if err is not None and err.fatal():
            raise ConnectError(f"consumer failed: {err}")
        log.warning("consume error", extra={**self.log_extra, "error": str(err)})

    def _convert(self, msg: Message) -> SinkRecord | None:
        """The record for ``put``, or None if a tolerated failure or a transform dropped it."""
        conv, run = self.converters, self.errors.run
        topic: str = msg.topic()  # type: ignore[assignment]
        ok, key = run("KEY_CONVERTER", conv.key, conv.key.to_connect, topic, msg.key(), raw=msg)
        if not ok:
            return None
        value_conv = conv.value
        ok, value = run(
            "VALUE_CONVERTER", value_conv, value_conv.to_connect, topic, msg.value(), raw=msg
        )
        if not ok:
            return None
        headers: tuple[Header, ...] | None = ()
        if raw_headers := msg.headers():
            ok, headers = run(
                "HEADER_CONVERTER", conv.header, self._headers, topic, raw_headers, raw=msg
            )
            if not ok:
                return None
        assert key is not None and value is not None
        ts_type, ts = msg.timestamp()
        record = new_sink_record(
            topic,
            msg.partition(),
            key.value,
            value.value,
            key.schema,  # type: ignore[arg-type]
            value.schema,
            ts if ts_type else None,
            headers or (),
            msg.offset(),  # type: ignore[arg-type]
            _TIMESTAMP_TYPES.get(ts_type, TimestampType.NO_TIMESTAMP),
        )
        if topic not in self._topics_seen:
            self.services.status_store.put_topic(self.id.connector, topic, self.id.task)
            self._topics_seen.add(topic)
        if self._identity:
            return record
        ok, out = run("TRANSFORMATION", self.chain, self.chain.apply, record, raw=msg)
        return out if ok else None

    def _headers(self, topic: str, raw: list[tuple[str, bytes | None]]) -> tuple[Header, ...]:
        to_connect = self.converters.header.to_connect
        cache = self._header_cache
        if cache is None:  # a converter that may depend on the topic or keep state
            out = []
            for key, data in raw:
                sv = to_connect(topic, key, data)
                out.append(Header(key, sv.value, sv.schema))
            return tuple(out)
        # The built-in converters are pure functions of (key, bytes): repeated headers (a
        # file name, a source id) are converted once; decimal integers (sequence numbers,
        # positions) are parsed here exactly as SimpleHeaderConverter would, without its
        # text round trip.
        digits = self._int_headers
        out: list[Header] = []
        append = out.append
        int8, int16, int32, int64 = (schema for schema, _ in _INT_SCHEMAS)
        for key, data in raw:
            if digits and type(data) is bytes and data.isdigit() and len(data) < 19:
                # the narrowest of _INT_SCHEMAS that holds it (non-negative: digits only)
                number = int(data)
                schema = (
                    int8 if number < 0x80 else int16 if number < 0x8000
                    else int32 if number < 0x80000000 else int64
                )  # fmt: skip
                append(new_header(key, number, schema))
                continue
            header = cache.get((key, data))
            if header is None:
                sv = to_connect(topic, key, data)
                header = new_header(key, sv.value, sv.schema)
                if type(sv.value) in _IMMUTABLE:
                    if len(cache) >= _HEADER_CACHE_MAX:
                        cache.clear()
                    cache[(key, data)] = header
            append(header)
        return tuple(out)

    def _deliver(self, batch: list[SinkRecord] | SinkRecordBatch) -> bool:
        """Calls ``put`` until it accepts the batch; False if stopped before it did.

        A ``SinkRecordBatch`` is settled after ``put``: conversion failures the task did not
        look at are reported (or fail the task) as if the records had been built up front.
        """
        assert self.task is not None
        delay = 0.1
        while True:
            try:
                self.task.put(batch)
                if type(batch) is SinkRecordBatch:
                    batch.settle()
                return True
            except RetriableError as exc:
                if type(batch) is SinkRecordBatch and batch.failure is not None:
                    # the records could not be built (an intolerable conversion failure):
                    # retrying put cannot help; fail the task as the eager path would
                    raise batch.failure from exc
                log.warning("put failed, retrying", extra={**self.log_extra, "error": str(exc)})
                if self.stopping.wait(delay):
                    return False
                delay = min(delay * 2, 10.0)

    def commit(self, partitions: set[TopicPartition]) -> None:
        """pre_commit + synchronous commit of what the task confirmed, for ``partitions``."""
        if self.task is None or self.consumer is None:
            return
        current = {tp: off for tp, off in self.current.items() if tp in partitions}
        if not current:
            return
        confirmed = self.task.pre_commit(dict(current))
        to_commit = {
            tp: off
            for tp, off in (confirmed or {}).items()
            if tp in current and off is not None and self.committed.get(tp) != off
        }
        if not to_commit:
            return
        self.consumer.commit(
            offsets=[
                KafkaTopicPartition(tp.topic, tp.partition, off) for tp, off in to_commit.items()
            ],
            asynchronous=False,
        )
        self.committed.update(to_commit)
        log.debug("committed offsets", extra={**self.log_extra, "partitions": len(to_commit)})

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
                self.task.close(sorted(self.assignment, key=lambda t: (t.topic, t.partition)))
                self.task.stop()
        finally:
            if self.consumer is not None:
                self.consumer.close()
            if self.chain is not None:
                close_chain(self.chain)
