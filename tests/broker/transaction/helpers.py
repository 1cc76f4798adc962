"""Shared pieces of the transaction tests: a broker with fast transaction timers, and reading a
topic to its end under either isolation level with a real client (confluent-kafka)."""

from __future__ import annotations

import time
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.broker import BrokerProcess

TIMEOUT = 30.0
FAST_TIMERS = (
    "-o", "transaction.abort.timed.out.transaction.cleanup.interval.ms=200",
    "-o", "transaction.state.log.num.partitions=5",
    "--log-cleaner-backoff-ms", "200",
)  # fmt: skip


def txn_broker(data_dir: Path, *extra: str) -> BrokerProcess:
    return BrokerProcess(data_dir, *FAST_TIMERS, *extra)


def create_topic(bootstrap: str, topic: str, partitions: int = 1, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive its futures
    admin.create_topics([NewTopic(topic, partitions, 1, config=configs)])[topic].result(TIMEOUT)


def read_all(
    bootstrap: str, topic: str, partitions: int = 1, isolation: str = "read_committed"
) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """(partition, offset, key, value) of every record a consumer of ``isolation`` sees, from
    the start to the end (the LSO for read_committed), in order per partition."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "readers", "isolation.level": isolation,
        "enable.auto.commit": False, "enable.partition.eof": True, "log_level": 0,
    })  # fmt: skip
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    out: list[tuple[int, int, bytes | None, bytes | None]] = []
    at_end: set[int] = set()
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(at_end) < partitions:
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic}: no end of partition within {TIMEOUT}s")
            for msg in consumer.consume(1000, 0.2):
                err = msg.error()
                if err is not None and err.code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition())
                elif err is not None:
                    raise KafkaException(err)
                else:
                    at_end.discard(msg.partition())
                    out.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
    finally:
        consumer.close()
    return out


def values(records: list[tuple[int, int, bytes | None, bytes | None]]) -> list[bytes | None]:
    return [r[3] for r in records]


def end_offsets(bootstrap: str, topic: str, partition: int = 0) -> tuple[int, int]:
    """(LSO, high watermark) of a partition, from ListOffsets of both isolation levels."""
    ends = []
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "ends",
                             "isolation.level": isolation, "log_level": 0})  # fmt: skip
        try:
            tp = TopicPartition(topic, partition)
            ends.append(consumer.get_watermark_offsets(tp, TIMEOUT, cached=False)[1])
        finally:
            consumer.close()
    return ends[0], ends[1]
