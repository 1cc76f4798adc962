"""Failover: kill -9 of a partition leader (then of a second broker) during an idempotent
acks=all produce loses no acknowledged record, duplicates none and keeps per-partition order."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.broker.cluster.cluster import Cluster


def _produce_through_kills(c: Cluster, topic: str, total: int) -> dict[int, list[int]]:
    """Produces ``total`` keyed records, killing two brokers on the way; returns the acked
    values per partition in acknowledgement order."""
    producer = Producer({
        "bootstrap.servers": c.bootstrap, "enable.idempotence": True, "acks": "all",
        "linger.ms": 5, "message.timeout.ms": 120_000, "retry.backoff.ms": 100,
        "topic.metadata.refresh.interval.ms": 1000,
    })  # fmt: skip
    acked: dict[int, list[int]] = {}
    failed: list[object] = []

    def on_delivery(err: object, msg: object) -> None:
        if err is not None:
            failed.append(err)
        else:
            acked.setdefault(msg.partition(), []).append(int(msg.value()))  # type: ignore[attr-defined]

    first = c.leader(topic, 0)
    second = next(b for b in c.brokers if b != first)
    kills = {total // 3: first, 2 * total // 3: second}
    for i in range(total):
        while True:
            try:
                producer.produce(topic, key=str(i).encode(), value=str(i).encode(),
                                 on_delivery=on_delivery)  # fmt: skip
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
        if i in kills:
            while sum(len(v) for v in acked.values()) < i // 2:
                producer.poll(0.05)
            c.brokers[kills[i]].kill()
    assert producer.flush(120) == 0, "records still in flight"
    assert failed == []
    return acked


def _read_all(c: Cluster, topic: str, partitions: int) -> dict[int, list[int]]:
    consumer = Consumer({"bootstrap.servers": c.bootstrap, "group.id": "reader",
                         "enable.auto.commit": False})  # fmt: skip
    out: dict[int, list[int]] = {}
    try:
        for p in range(partitions):
            _, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            consumer.assign([TopicPartition(topic, p, 0)])
            values: list[int] = []
            deadline = time.monotonic() + 60
            while len(values) < high and time.monotonic() < deadline:
                msg = consumer.poll(1)
                if msg is None or msg.error():
                    continue
                values.append(int(msg.value()))
            out[p] = values
    finally:
        consumer.close()
    return out


def _check(acked: dict[int, list[int]], stored: dict[int, list[int]]) -> None:
    for p, values in stored.items():
        assert len(values) == len(set(values)), f"partition {p} has duplicates"
        assert values == sorted(values), f"partition {p} is out of order"
        missing = set(acked.get(p, [])) - set(values)
        assert not missing, f"partition {p} lost {len(missing)} acknowledged records"


def _run(cluster: Cluster, topic: str, total: int) -> None:
    cluster.create_topic(topic, partitions=3, rf=3)
    for p in range(3):
        cluster.wait(lambda p=p: len(cluster.isr(topic, p)) == 3, "full ISR")
    acked = _produce_through_kills(cluster, topic, total)
    assert sum(len(v) for v in acked.values()) == total
    survivor = next(b for b in cluster.brokers.values() if b.running)
    for p in range(3):
        cluster.wait(lambda p=p: cluster.leader(topic, p) == survivor.broker_id, "failover")
    _check(acked, _read_all(cluster, topic, 3))


def test_leader_kill_loses_no_acknowledged_record(cluster: Cluster, topic_name: str) -> None:
    """100k keyed records (the issue's figure; ~15 s here), two brokers killed on the way."""
    _run(cluster, topic_name, 100_000)
