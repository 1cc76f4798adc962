"""confluent-kafka plumbing for the data source: metadata, watermarks and range reads.

Everything here runs either on the driver (planning: which partitions, which offsets) or inside
a Python worker (``read_range``), so each call opens its own short-lived client: clients are
not picklable and Spark gives no per-executor hook to keep one. A reader consumer uses
``assign`` only, never joins a group and never commits; the group id is a throwaway because
librdkafka insists on one.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import logging
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from operator import itemgetter
from typing import TYPE_CHECKING, cast

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from spark_pipelines.datasource import _json
from spark_pipelines.datasource._options import EARLIEST, LATEST, Subscription

if TYPE_CHECKING:
    from spark_pipelines.datasource import _fetch

log = logging.getLogger(__name__)

TIMEOUT_S = 30.0
BATCH_ROWS = 50_000
_first = itemgetter(0)
_second = itemgetter(1)

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


def arrow_schema(json_fields: tuple[str, ...] = ()) -> pa.Schema:
    """ARROW_SCHEMA, plus ``value_json`` when option ``valueJsonFields`` names fields."""
    if not json_fields:
        return ARROW_SCHEMA
    return ARROW_SCHEMA.append(pa.field(_json.COLUMN, _json.struct_type(json_fields)))


def spark_schema(json_fields: tuple[str, ...] = ()) -> str:
    if not json_fields:
        return SPARK_SCHEMA
    return f"{SPARK_SCHEMA}, {_json.COLUMN} {_json.spark_type(json_fields)}"


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
    kafka_config: dict[str, str],
    topic: str,
    partition: int,
    start: int,
    end: int,
    json_fields: tuple[str, ...] = (),
    native: bool = True,
) -> Iterator[pa.RecordBatch]:
    """Records ``start <= offset < end`` of one partition as Arrow batches of ARROW_SCHEMA.

    Offsets may have holes (compaction, transaction markers): the read stops at the first record
    at or past ``end`` or at the end of the partition, whichever comes first. A start below the
    log start (retention deleted it) reads from the log start, as ``failOnDataLoss=false`` does.
    With ``json_fields`` each batch also carries ``value_json`` (see ``_json``).

    With ``native`` (option ``fetch.native``, default true) the range is read by ``_fetch``
    (Fetch requests on a socket, batches decoded by numba, no Python per record) for as long as
    that path can be exact; from the first offset it cannot serve, the rest of the range is
    read here through confluent-kafka (:func:`_consume_range`), so the rows are the same either
    way.
    """
    if end <= start:
        return
    client = consumer(kafka_config)
    try:
        reader = (
            _native_reader(client, kafka_config, topic, partition, start, end) if native else None
        )
        if reader is not None:
            for batch in reader.batches():
                yield _with_json(batch, json_fields)
            if reader.finished:
                return
            start = reader.position
        yield from _consume_range(client, topic, partition, start, end, json_fields)
    finally:
        client.close()


def _native_reader(
    client: Consumer,
    kafka_config: dict[str, str],
    topic: str,
    partition: int,
    start: int,
    end: int,
) -> _fetch.NativeRange | None:
    """The fast-path reader for this range, or None where it cannot be used at all."""
    # Imported here: the driver-side planning process Spark starts for every streaming query
    # (offsets only) would otherwise pay for kio's import, ~40% of that process's start-up.
    from spark_pipelines.datasource import _fetch

    why = _fetch.usable(kafka_config)
    if why is None and _fetch.native_decoder() is None:
        why = "numba decoder unavailable"
    leader = None
    if why is None:
        try:
            meta = client.list_topics(topic, timeout=TIMEOUT_S)
        except KafkaException as exc:
            meta, why = None, f"metadata: {exc}"
        topic_meta = meta.topics.get(topic) if meta is not None else None
        part = topic_meta.partitions.get(partition) if topic_meta is not None else None
        broker = meta.brokers.get(part.leader) if meta is not None and part is not None else None
        if broker is None:
            why = why or "partition leader unknown"
        else:
            leader = (broker.host, broker.port)
    if leader is None:
        log.debug("native fetch not used for %s-%d: %s", topic, partition, why)
        return None
    return _fetch.NativeRange(
        kafka_config, leader, topic, partition, start, end, ARROW_SCHEMA,
        batch_rows=BATCH_ROWS, timeout=TIMEOUT_S,
    )  # fmt: skip


def _with_json(batch: pa.RecordBatch, json_fields: tuple[str, ...]) -> pa.RecordBatch:
    if not json_fields:
        return batch
    parsed = _json.parse(None, batch.column("value"), json_fields)
    return pa.RecordBatch.from_arrays([*batch.columns, parsed], schema=arrow_schema(json_fields))


def _consume_range(
    client: Consumer,
    topic: str,
    partition: int,
    start: int,
    end: int,
    json_fields: tuple[str, ...],
) -> Iterator[pa.RecordBatch]:
    """The general path: ``[start, end)`` through confluent-kafka's ``consume()``.

    Each ``consume()`` call (up to BATCH_ROWS records) becomes one record batch at once, so no
    message object outlives its batch. The cyclic garbage collector is paused while a batch is
    fetched and converted: every ``Message`` is a GC-tracked object, and tens of thousands of
    them alive at once made the collector's generation scans cost about a third of the read
    (they hold no cycles; reference counting frees them). It runs again before each ``yield``.
    """
    client.assign([TopicPartition(topic, partition, start)])
    deadline = time.monotonic() + TIMEOUT_S
    expect = start
    done = False
    while not done:
        with _gc_paused():
            # Ask for exactly what is left (an EOF event counts too): consume() then returns
            # as soon as the range is complete instead of waiting out its timeout.
            msgs = client.consume(num_messages=max(1, min(BATCH_ROWS, end - expect)), timeout=0.5)
            if not msgs:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no records from {topic}-{partition} at offset < {end}")
                continue
            errors = list(map(Message.error, msgs))
            # ``any``, not ``errors.count(None)``: count compares each KafkaError with None, and
            # confluent-kafka's KafkaError.__eq__ (C KafkaError_richcompare) converts a
            # non-KafkaError operand to an int without checking for failure: it answers False
            # with a TypeError left set, which CPython reports as a SystemError from a later C
            # call (zip, below) whenever an EOF event arrives in the same consume() as records.
            # A truth test compares nothing, and a KafkaError, like any exception, is truthy.
            if any(errors):  # rare: EOF (last at most) or a real error
                for m, err in zip(msgs, errors, strict=True):
                    if err is None:
                        continue
                    if err.code() != KafkaError._PARTITION_EOF:
                        raise KafkaException(err)
                    eof_at = cast(int, m.offset())  # an EOF event carries the end offset
                    done = done or eof_at >= end or _past_end(client, topic, partition, end)
                msgs = [m for m, err in zip(msgs, errors, strict=True) if err is None]
                if not msgs:
                    continue
            deadline = time.monotonic() + TIMEOUT_S
            # fetched records always carry an offset (only events without one type it None)
            offsets = cast("list[int]", list(map(Message.offset, msgs)))
            last = offsets[-1]
            if last >= end - 1:
                done = True
                if last >= end:  # a hole before end, then records past it
                    keep = bisect.bisect_left(offsets, end)
                    msgs, offsets = msgs[:keep], offsets[:keep]
            expect = last + 1
            batch = _batch(msgs, offsets, topic, partition, json_fields) if msgs else None
            del msgs
        if batch is not None:
            yield batch


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _past_end(client: Consumer, topic: str, partition: int, end: int) -> bool:
    """At EOF: true when the log holds nothing more below ``end`` (its high watermark >= end)."""
    _low, high = client.get_watermark_offsets(TopicPartition(topic, partition), cached=True)
    return high >= end


def _headers(raw: list[tuple[str, bytes]] | None) -> list[dict[str, object]] | None:
    # Spark's Kafka source gives null, not an empty array, for a record without headers.
    return [{"key": k, "value": v} for k, v in raw] if raw else None


def _batch(
    msgs: list[Message],
    offsets: list[int],
    topic: str,
    partition: int,
    json_fields: tuple[str, ...] = (),
) -> pa.RecordBatch:
    """Column-wise: one C-level ``map`` per field, no per-record Python code on the hot path."""
    n = len(msgs)
    stamps = list(map(Message.timestamp, msgs))  # (type, ms): 0 none, 1 create, 2 log append
    millis = pa.array(list(map(_second, stamps)), pa.int64())
    micros = pc.multiply(millis, 1000)
    if pc.any(pc.less(millis, 0)).as_py():  # no timestamp (-1): null, as Spark shows it
        micros = pc.if_else(pc.less(millis, 0), None, micros)
    kinds = set(map(_first, stamps))
    if len(kinds) == 1:
        (kind,) = kinds
        kind_col = _constant(kind - 1 if kind > 0 else -1, pa.int32(), n)
    else:
        kind_col = pa.array([t - 1 if t > 0 else -1 for t, _ in stamps], pa.int32())
    # consumed messages carry headers as a list of pairs (the dict form is produce-only)
    raw_headers = cast("list[list[tuple[str, bytes]] | None]", list(map(Message.headers, msgs)))
    headers = (
        pa.array(list(map(_headers, raw_headers)), HEADER_TYPE)
        if any(raw_headers)
        else pa.nulls(n, HEADER_TYPE)
    )
    keys = list(map(Message.key, msgs))
    values = list(map(Message.value, msgs))
    value_col = pa.array(values, pa.binary())
    arrays = [
        pa.nulls(n, pa.binary()) if keys.count(None) == n else pa.array(keys, pa.binary()),
        value_col,
        _constant(topic, pa.string(), n),
        _constant(partition, pa.int32(), n),
        pa.array(offsets, pa.int64()),
        micros.cast(pa.timestamp("us", tz="UTC")),
        kind_col,
        headers,
    ]
    if json_fields:
        arrays.append(_json.parse(values, value_col, json_fields))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(json_fields))


def _constant(value: object, type_: pa.DataType, n: int) -> pa.Array:
    return pa.repeat(pa.scalar(value, type_), n)


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)
