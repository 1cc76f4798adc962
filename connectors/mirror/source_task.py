"""MirrorSourceTask: reads its source partitions and returns them as columnar batches.

Each source partition is assigned (never subscribed: no consumer group on the source) and
starts one past the last offset this task's records were acknowledged at, as Kafka's
``MirrorSourceTask`` does: the source offset of a record is ``{"offset": <its offset>}`` under
the source partition ``{"cluster": <alias>, "topic", "partition"}``, so offsets written by a
Kafka MirrorMaker 2 (same connector name, same offsets topic) resume here too. A partition with
no committed offset starts where ``auto.offset.reset`` says (earliest by default).

Records are copied as they are: key, value, headers (raw bytes, in order, repeats kept) and
timestamp, to the same partition number of the remote topic. A poll returns one
``SourceRecordBatch`` per source partition (and per run of records with the same header
names), so the worker produces them from columns without a record object each; the
byte-array converters the config requires pass the bytes through untouched.

The worker reports each batch's downstream offsets to ``commit_batch``, which feeds the
``OffsetSyncWriter``; each offset commit (``commit``) promotes the delayed syncs.

Threads: ``poll`` and ``commit`` on the task's thread; ``commit_batch`` on the producer's
callback thread; ``stop`` from another thread, so it sets a flag and closes the consumer only
once ``poll`` is out of it (a lock; ``poll`` waits in slices of at most 200 ms).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from connectors.mirror.config import MirrorSourceConfig
from connectors.mirror.offset_sync_writer import OffsetSyncWriter
from hub.api import ConnectError, SourceRecordBatch, SourceTask
from hub.api.schema import OPTIONAL_BYTES_SCHEMA

log = logging.getLogger(__name__)

ASSIGNED_PARTITIONS = "task.assigned.partitions"
MAX_RECORDS = 4096  # per poll, unless the source consumer's max.poll.records says otherwise
_SLICE = 0.2

_value = Message.value
_key = Message.key
_offset = Message.offset
_headers = Message.headers
_timestamp = Message.timestamp
_topic = Message.topic
_partition = Message.partition
_error = Message.error
_second = itemgetter(1)


def encode_partitions(partitions: Sequence[tuple[str, int]]) -> str:
    """Kafka's ``TopicPartition.toString`` list: ``orders-0,orders-1``."""
    return ",".join(f"{t}-{p}" for t, p in partitions)


def decode_partitions(text: str) -> list[tuple[str, int]]:
    out = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        topic, _, partition = item.rpartition("-")
        out.append((topic, int(partition)))
    return out


class MirrorSourceTask(SourceTask):
    def start(self, config: Mapping[str, Any]) -> None:
        cfg = MirrorSourceConfig.parse(config)
        self.alias = cfg.source_cluster_alias
        self.policy = cfg.policy()
        self.log_extra = {"connector": cfg.connector_name, "source": self.alias}
        self.poll_timeout = cfg.consumer_poll_timeout_ms / 1000
        partitions = decode_partitions(str(config.get(ASSIGNED_PARTITIONS, "")))
        settings = cfg.consumer("source", "replication-consumer")
        self.max_records = int(settings.pop("max.poll.records", MAX_RECORDS))
        self._stopping = threading.Event()
        self._consumer_lock = threading.Lock()
        self._wrapped: dict[tuple[str, int], dict[str, Any]] = {}
        self._remote: dict[str, str] = {}
        self._errors_seen: set[tuple[Any, Any, int]] = set()
        try:
            self.consumer = Consumer(settings)
        except KafkaException as exc:
            raise ConnectError(f"source consumer: invalid setting: {exc}") from None
        self.syncs: OffsetSyncWriter | None = None
        if cfg.emit_offset_syncs_enabled:
            side = cfg.offset_syncs_topic_location
            producer_settings = cfg.client(side, "producer", f"offset-syncs-{side}-producer")
            producer_settings.setdefault("linger.ms", "0")
            try:
                producer = Producer(producer_settings)
            except KafkaException as exc:
                raise ConnectError(f"offset-syncs producer: invalid setting: {exc}") from None
            self.syncs = OffsetSyncWriter(
                producer, cfg.offset_syncs_topic(), cfg.offset_lag_max, self.log_extra
            )
        self._assign(partitions, settings.get("auto.offset.reset", "earliest"))
        log.info(
            "mirror task replicating partitions",
            extra={**self.log_extra, "partitions": len(partitions)},
        )

    def _wrap(self, topic: str, partition: int) -> dict[str, Any]:
        wrapped = self._wrapped.get((topic, partition))
        if wrapped is None:
            wrapped = {"cluster": self.alias, "partition": partition, "topic": topic}
            self._wrapped[(topic, partition)] = wrapped
        return wrapped

    def _assign(self, partitions: list[tuple[str, int]], reset: str) -> None:
        start = OFFSET_END if reset == "latest" else OFFSET_BEGINNING
        reader = self.context.offset_reader
        assignment = []
        for topic, partition in partitions:
            offset = reader.offset(self._wrap(topic, partition))
            last = None if offset is None else offset.get("offset")
            position = start if last is None or int(last) < 0 else int(last) + 1
            assignment.append(TopicPartition(topic, partition, position))
        self.consumer.assign(assignment)

    # -- polling -------------------------------------------------------------------------------
    def poll(self) -> list[SourceRecordBatch] | None:
        if self.syncs is not None:
            self.syncs.poll()
        with self._consumer_lock:
            if self._stopping.is_set():
                return None
            messages = self._consume()
        if not messages:
            return None
        return self._batches(messages)

    def _consume(self) -> list[Message]:
        """Waits (in slices, for ``stop``) up to ``consumer.poll.timeout.ms`` for a record,
        then takes whatever else is already fetched, up to ``max_records``."""
        deadline = time.monotonic() + self.poll_timeout
        while not self._stopping.is_set():
            wait = min(_SLICE, deadline - time.monotonic())
            if wait <= 0:
                return []
            try:
                first = self.consumer.poll(wait)
                if first is None:
                    continue
                messages = [first]
                if self.max_records > 1:
                    messages += self.consumer.consume(self.max_records - 1, 0)
            except KafkaException as exc:
                log.warning("source poll failed", extra={**self.log_extra, "error": str(exc)})
                return []
            if any(map(_error, messages)):
                messages = self._without_errors(messages)
            return messages
        return []

    def _without_errors(self, messages: list[Message]) -> list[Message]:
        """The records; errors are logged once per partition and error code (a deleted
        topic reports one on every poll until the connector's refresh drops it)."""
        kept = []
        for message in messages:
            err = message.error()
            if err is None:
                kept.append(message)
                continue
            seen = (message.topic(), message.partition(), err.code())
            if err.code() != KafkaError._PARTITION_EOF and seen not in self._errors_seen:
                self._errors_seen.add(seen)
                log.warning(
                    "source partition error",
                    extra={**self.log_extra, "topic": seen[0], "partition": seen[1],
                           "error": str(err)},
                )  # fmt: skip
        return kept

    def _batches(self, messages: list[Message]) -> list[SourceRecordBatch]:
        topics: list[Any] = list(map(_topic, messages))
        partitions: list[Any] = list(map(_partition, messages))
        if topics.count(topics[0]) == len(topics) and partitions.count(partitions[0]) == len(
            partitions
        ):
            return self._partition_batches(topics[0], partitions[0], messages)
        groups: dict[tuple[str, int], list[Message]] = {}
        for key, message in zip(zip(topics, partitions, strict=True), messages, strict=True):
            group = groups.get(key)
            if group is None:
                groups[key] = [message]
            else:
                group.append(message)
        out = []
        for (topic, partition), group in groups.items():
            out += self._partition_batches(topic, partition, group)
        return out

    def _partition_batches(
        self, topic: str, partition: int, messages: list[Message]
    ) -> list[SourceRecordBatch]:
        """One batch per run of records with the same header names (usually one batch)."""
        headers: list[Any] = list(map(_headers, messages))
        if headers.count(None) == len(headers):
            return [self._batch(topic, partition, messages, None)]
        out = []
        start, names = 0, _names(headers[0])
        for i in range(1, len(messages) + 1):
            following = _names(headers[i]) if i < len(messages) else None
            if i == len(messages) or following != names:
                run = headers[start:i] if names else None
                out.append(self._batch(topic, partition, messages[start:i], run))
                start, names = i, following
        return out

    def _batch(
        self,
        topic: str,
        partition: int,
        messages: list[Message],
        headers: list[Any] | None,
    ) -> SourceRecordBatch:
        remote = self._remote.get(topic)
        if remote is None:
            remote = self._remote[topic] = self.policy.format_remote_topic(self.alias, topic)
        stamps = list(map(_second, map(_timestamp, messages)))
        if min(stamps) < 0:  # no timestamp (magic v0 records): let the producer stamp them
            stamps = [None if t < 0 else t for t in stamps]  # type: ignore[misc]
        columns: list[tuple[str, list[Any]]] = []
        if headers:
            for j, (name, _) in enumerate(headers[0]):
                columns.append((name, [h[j][1] for h in headers]))
        return SourceRecordBatch(
            remote,
            self._wrap(topic, partition),
            list(map(_value, messages)),
            value_schema=OPTIONAL_BYTES_SCHEMA,
            keys=list(map(_key, messages)),
            key_schema=OPTIONAL_BYTES_SCHEMA,
            header_columns=columns,
            offset_columns={"offset": _offsets(messages)},
            partition=partition,
            timestamps=stamps,
        )

    # -- acknowledgements and commits ----------------------------------------------------------
    def commit_batch(self, batch: SourceRecordBatch, offsets: Sequence[int | None]) -> None:
        syncs = self.syncs
        if syncs is None:
            return
        source = batch.source_partition
        upstream = batch.offset_columns["offset"]
        syncs.update(source["topic"], source["partition"], upstream, offsets)

    def commit(self) -> None:
        if self.syncs is not None:
            self.syncs.promote()

    def stop(self) -> None:
        self._stopping.set()
        with self._consumer_lock, contextlib.suppress(RuntimeError):  # RuntimeError: closed
            self.consumer.close()
        if self.syncs is not None:
            # The runtime may commit once more after ``stop`` (and call ``commit``), but this
            # writer is closing: send what is known now. Syncs are true once their records
            # were acknowledged, whether or not the source offsets are committed yet.
            self.syncs.promote()
            self.syncs.close(timeout=5.0)


def _offsets(messages: list[Message]) -> Sequence[Any]:
    """The records' source offsets: a ``range`` when they are contiguous (the usual case: no
    compaction gaps or transaction markers), which costs nothing per record."""
    first, last = messages[0].offset(), messages[-1].offset()
    if first is not None and last is not None and last - first == len(messages) - 1:
        return range(first, last + 1)
    offsets: list[Any] = list(map(_offset, messages))
    return offsets


def _names(headers: list[tuple[str, Any]] | None) -> tuple[str, ...] | None:
    return None if not headers else tuple(name for name, _ in headers)
