"""Producing Arrow batches of rows (key, value, headers, topic, partition) to topics.

One idempotent producer per task (acks=all, enable.idempotence): librdkafka's own retries can
neither duplicate nor reorder a partition's records. A task's records are all acknowledged
before ``produce_batches`` returns, so a successful Spark task means durable rows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pyarrow as pa
from confluent_kafka import KafkaException, Producer

log = logging.getLogger(__name__)

FLUSH_TIMEOUT_S = 120.0


def producer(kafka_config: dict[str, str]) -> Producer:
    config: dict[str, object] = {
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 5,
        "batch.size": 1 << 20,
        "queue.buffering.max.messages": 500_000,
        "compression.type": "lz4",
    }
    config.update(kafka_config)
    return Producer(config, logger=log)


@dataclass
class Written:
    """What one task produced: rows per topic and how many it skipped as already written."""

    rows: int = 0
    skipped: int = 0
    topics: set[str] = field(default_factory=set)


def _column(batch: pa.RecordBatch, name: str) -> list | None:
    index = batch.schema.get_field_index(name)
    if index < 0:
        return None
    col = batch.column(index)
    is_text = pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
    if is_text and name in ("key", "value"):
        col = col.cast(pa.binary())
    return col.to_pylist()


def produce_batches(
    kafka_config: dict[str, str],
    default_topic: str | None,
    batches: Iterable[pa.RecordBatch],
    *,
    tag: Callable[[int], tuple[str, bytes] | None] | None = None,
    prod: Producer | None = None,
) -> Written:
    """Produces every row; ``tag(i)`` adds one header to row ``i`` or returns None to skip it.
    ``prod``: a producer to use (a transactional one, in a transaction) instead of a new one."""
    if prod is None:
        prod = producer(kafka_config)
    errors: list[str] = []
    written = Written()

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    index = 0
    for batch in batches:
        values = _column(batch, "value")
        if values is None:
            raise ValueError("the sluice writer needs a 'value' column")
        n = len(values)
        keys = _column(batch, "key") or [None] * n
        topics = _column(batch, "topic") or [default_topic] * n
        parts = _column(batch, "partition")
        headers = _column(batch, "headers")
        for row in range(n):
            extra = tag(index) if tag is not None else None
            index += 1
            if tag is not None and extra is None:
                written.skipped += 1
                continue
            topic = topics[row] or default_topic
            if topic is None:
                raise ValueError("no topic: set option 'topic' or give a 'topic' column")
            hdrs = [(h["key"], h["value"]) for h in headers[row] or ()] if headers else []
            if extra is not None:
                hdrs.append(extra)
            kwargs = {} if parts is None or parts[row] is None else {"partition": parts[row]}
            _produce(prod, topic, keys[row], values[row], hdrs, on_delivery, kwargs)
            written.rows += 1
            written.topics.add(topic)
        prod.poll(0)
    remaining = prod.flush(FLUSH_TIMEOUT_S)
    if remaining or errors:
        raise KafkaException(f"{remaining} records undelivered; errors: {errors[:3]}")
    return written


def _produce(prod: Producer, topic: str, key, value, headers, cb, kwargs) -> None:
    while True:
        try:
            prod.produce(topic, value, key, headers=headers or None, on_delivery=cb, **kwargs)
            return
        except BufferError:
            prod.poll(0.05)  # the local queue is full: let deliveries drain it
