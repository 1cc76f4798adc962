"""confluent-kafka plumbing for the data source: metadata, watermarks and range reads.

Everything here runs either on the driver (planning: which partitions, which offsets) or inside
a Python worker (``read_range``), so each call opens its own short-lived client: clients are
not picklable and Spark gives no per-executor hook to keep one. A reader consumer uses
``assign`` only, never joins a group and never commits; the group id is a throwaway because
librdkafka insists on one.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from spark_pipelines.datasource._options import EARLIEST, LATEST, Subscription

log = logging.getLogger(__name__)

TIMEOUT_S = 30.0
BATCH_ROWS = 50_000

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
ARROW_SCHEMA = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("timestampType", pa.int32()),
        ("headers", HEADER_TYPE),
    ]
)
"""Spark's Kafka-source columns in the exact Arrow types Spark expects back from ``read``."""

SPARK_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
    "timestampType int, headers array<struct<key: string, value: binary>>"
)


def consumer(kafka_config: dict[str, str], **extra: str) -> Consumer:
    config: dict[str, object] = {
        "group.id": f"sluice-spark-{uuid.uuid4().hex[:12]}",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
        "fetch.max.bytes": 64 << 20,
        "max.partition.fetch.bytes": 16 << 20,
        "queued.min.messages": 200_000,
    }
    config.update(kafka_config)
    config.update(extra)
    return Consumer(config, logger=log)


def list_partitions(client: Consumer, subscription: Subscription) -> list[tuple[str, int]]:
    """Every (topic, partition) the subscription covers now, sorted (deterministic plans)."""
    if subscription.assign:
        return sorted(subscription.assign)
    metadata = client.list_topics(timeout=TIMEOUT_S)
    found: list[tuple[str, int]] = []
    for name, topic in metadata.topics.items():
        if topic.error is not None or not subscription.matches(name):
            continue
        found.extend((name, p) for p in topic.partitions)
    if subscription.topics:
        missing = set(subscription.topics) - {t for t, _ in found}
        if missing:
            log.info("subscribed topics not found yet: %s", ", ".join(sorted(missing)))
    return sorted(found)


def watermarks(
    client: Consumer, partitions: list[tuple[str, int]]
) -> dict[tuple[str, int], tuple[int, int]]:
    """``(log start, high watermark)`` of each partition."""
    return {
        tp: client.get_watermark_offsets(TopicPartition(*tp), timeout=TIMEOUT_S, cached=False)
        for tp in partitions
    }


def offsets_for_timestamp(
    client: Consumer, partitions: list[tuple[str, int]], timestamp_ms: int
) -> dict[tuple[str, int], int]:
    """First offset with timestamp >= ``timestamp_ms`` per partition; the end when none has."""
    if not partitions:
        return {}
    query = [TopicPartition(t, p, timestamp_ms) for t, p in partitions]
    answer = client.offsets_for_times(query, timeout=TIMEOUT_S)
    marks = watermarks(client, partitions)
    out: dict[tuple[str, int], int] = {}
    for tp in answer:
        key = (tp.topic, tp.partition)
        out[key] = tp.offset if tp.offset >= 0 else marks[key][1]
    return out


def resolve(symbolic: int, marks: tuple[int, int]) -> int:
    """A concrete offset for EARLIEST/LATEST; numeric offsets are clamped into the log."""
    low, high = marks
    if symbolic == EARLIEST:
        return low
    if symbolic == LATEST:
        return high
    return max(low, min(symbolic, high))


def read_range(
    kafka_config: dict[str, str], topic: str, partition: int, start: int, end: int
) -> Iterator[pa.RecordBatch]:
    """Records ``start <= offset < end`` of one partition as Arrow batches of ARROW_SCHEMA.

    Offsets may have holes (compaction, transaction markers): the read stops at the first record
    at or past ``end`` or at the end of the partition, whichever comes first. A start below the
    log start (retention deleted it) reads from the log start, as ``failOnDataLoss=false`` does.
    """
    if end <= start:
        return
    client = consumer(kafka_config)
    try:
        client.assign([TopicPartition(topic, partition, start)])
        pending: list = []
        deadline = time.monotonic() + TIMEOUT_S
        done = False
        expect = start
        while not done:
            # Ask for exactly what is left (an EOF event counts too): consume() then returns as
            # soon as the range is complete instead of waiting out its timeout.
            want = max(1, min(10_000, end - expect))
            msgs = client.consume(num_messages=want, timeout=0.5)
            if not msgs:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no records from {topic}-{partition} at offset < {end}")
                continue
            # The hot path works on whole lists (one comprehension per column) rather than
            # per-record Python branches: errors are rare, EOF is the last message at most.
            data = [m for m in msgs if m.error() is None]
            if len(data) != len(msgs):
                for m in msgs:
                    err = m.error()
                    if err is None:
                        continue
                    if err.code() != KafkaError._PARTITION_EOF:
                        raise KafkaException(err)
                    done = done or m.offset() >= end or _past_end(client, topic, partition, end)
            if data:
                deadline = time.monotonic() + TIMEOUT_S
                last = data[-1].offset()
                if last >= end - 1:
                    done = True
                    if last >= end:
                        data = [m for m in data if m.offset() < end]
                expect = last + 1
                pending.extend(data)
            if len(pending) >= BATCH_ROWS or (done and pending):
                yield _batch(pending, topic, partition)
                pending = []
    finally:
        client.close()


def _past_end(client: Consumer, topic: str, partition: int, end: int) -> bool:
    """At EOF: true when the log holds nothing more below ``end`` (its high watermark >= end)."""
    _low, high = client.get_watermark_offsets(TopicPartition(topic, partition), cached=True)
    return high >= end


def _headers(raw: list[tuple[str, bytes]] | None) -> list[dict[str, object]] | None:
    # Spark's Kafka source gives null, not an empty array, for a record without headers.
    return [{"key": k, "value": v} for k, v in raw] if raw else None


def _batch(msgs: list, topic: str, partition: int) -> pa.RecordBatch:
    n = len(msgs)
    zeros = pa.nulls(n, pa.int32()).fill_null(0)  # take() with these repeats a constant
    stamps = [m.timestamp() for m in msgs]
    millis = pa.array([ts for _, ts in stamps], pa.int64())
    micros = pc.multiply(millis, 1000)
    if pc.any(pc.less(millis, 0)).as_py():  # no timestamp (-1): null, as Spark shows it
        micros = pc.if_else(pc.less(millis, 0), None, micros)
    raw_headers = [m.headers() for m in msgs]
    headers = [_headers(h) for h in raw_headers] if any(raw_headers) else [None] * n
    arrays = [
        pa.array([m.key() for m in msgs], pa.binary()),
        pa.array([m.value() for m in msgs], pa.binary()),
        pa.array([topic], pa.string()).take(zeros),
        pa.array([partition], pa.int32()).take(zeros),
        pa.array([m.offset() for m in msgs], pa.int64()),
        micros.cast(pa.timestamp("us", tz="UTC")),
        pa.array([t - 1 if t > 0 else -1 for t, _ in stamps], pa.int32()),
        pa.array(headers, HEADER_TYPE),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)
