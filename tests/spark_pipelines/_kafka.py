"""Test helpers: create topics, produce records and read a topic back, with confluent-kafka."""

from __future__ import annotations

from collections.abc import Iterable

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic


def create_topic(bootstrap: str, name: str, partitions: int = 1, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = NewTopic(name, num_partitions=partitions, replication_factor=1, config=configs)
    admin.create_topics([new])[name].result(20)


def add_partitions(bootstrap: str, name: str, total: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_partitions([NewPartitions(name, total)])[name].result(20)


def produce(
    bootstrap: str,
    topic: str,
    records: Iterable[tuple[bytes | str | None, bytes | str]],
    *,
    partition: int | None = None,
    timestamp_ms: int | None = None,
    headers: list[tuple[str, bytes]] | None = None,
) -> None:
    prod = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    for key, value in records:
        kwargs: dict = {}
        if partition is not None:
            kwargs["partition"] = partition
        if timestamp_ms is not None:
            kwargs["timestamp"] = timestamp_ms
        if headers:
            kwargs["headers"] = headers
        while True:
            try:
                prod.produce(topic, value, key, **kwargs)
                break
            except BufferError:
                prod.poll(0.05)
    assert prod.flush(30) == 0


def read_all(bootstrap: str, topic: str) -> list[tuple[int, int, bytes | None, bytes, list]]:
    """Every record now in ``topic``: (partition, offset, key, value, headers)."""
    cons = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "t",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    meta = cons.list_topics(topic, timeout=10).topics[topic]
    parts = []
    for p in meta.partitions:
        low, high = cons.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
        if high > low:
            parts.append(TopicPartition(topic, p, low))
    out = []
    pending = {tp.partition for tp in parts}
    cons.assign(parts)
    while pending:
        msg = cons.poll(10)
        assert msg is not None, "timed out reading back"
        if msg.error():
            assert msg.error().code() == KafkaError._PARTITION_EOF
            pending.discard(msg.partition())
            continue
        out.append((msg.partition(), msg.offset(), msg.key(), msg.value(), msg.headers() or []))
    cons.close()
    return out
