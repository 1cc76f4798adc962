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
        cols: tuple[list, ...] = ([], [], [], [], [])
        deadline = time.monotonic() + TIMEOUT_S
        done = False
        expect = start
        while not done:
            # Ask for exactly what is left (an EOF event counts too): consume() then returns as
            # soon as the range is complete instead of waiting out its timeout.
            want = max(1, min(10_000, end - expect))
            msgs = client.consume(num_messages=want, timeout=0.5)
            if not msgs and time.monotonic() > deadline:
                raise TimeoutError(f"no records from {topic}-{partition} at offset < {end}")
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        done = msg.offset() >= end or _past_end(client, topic, partition, end)
                        continue
                    raise KafkaException(err)
                offset = msg.offset()
                if offset >= end:
                    done = True
                    break
                deadline = time.monotonic() + TIMEOUT_S
                expect = offset + 1
                _append(cols, msg, offset)
                if offset == end - 1:
                    done = True
                    break
            if len(cols[0]) >= BATCH_ROWS or (done and cols[0]):
                yield _batch(cols, topic, partition)
                cols = ([], [], [], [], [])
    finally:
        client.close()


def _past_end(client: Consumer, topic: str, partition: int, end: int) -> bool:
    """At EOF: true when the log holds nothing more below ``end`` (its high watermark >= end)."""
    _low, high = client.get_watermark_offsets(TopicPartition(topic, partition), cached=True)
    return high >= end


def _append(cols: tuple[list, ...], msg, offset: int) -> None:
    keys, values, offsets, stamps, headers = cols
    keys.append(msg.key())
    values.append(msg.value())
    offsets.append(offset)
    ts_type, ts = msg.timestamp()
    stamps.append((ts_type - 1 if ts_type > 0 else -1, ts))
    raw = msg.headers()
    # Spark's Kafka source gives null, not an empty array, for a record without headers.
    headers.append([{"key": k, "value": v} for k, v in raw] if raw else None)


def _batch(cols: tuple[list, ...], topic: str, partition: int) -> pa.RecordBatch:
    keys, values, offsets, stamps, headers = cols
    n = len(offsets)
    ts_types = [t for t, _ in stamps]
    micros = [ms * 1000 if ms >= 0 else None for _, ms in stamps]
    arrays = [
        pa.array(keys, pa.binary()),
        pa.array(values, pa.binary()),
        pa.array([topic] * n, pa.string()),
        pa.array([partition] * n, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array(micros, pa.timestamp("us", tz="UTC")),
        pa.array(ts_types, pa.int32()),
        pa.array(headers, HEADER_TYPE),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)
