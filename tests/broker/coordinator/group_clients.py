"""Helpers shared by the real-client consumer-group tests (topics, producing, polling)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

FAST_GROUP = {
    # Kafka's minimum session timeout is 6 s (group.min.session.timeout.ms); heartbeats are
    # frequent so a rebalance is noticed in a fraction of a second.
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 200,
    "max.poll.interval.ms": 10000,
}


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(10)


def produce(bootstrap: str, topic: str, values: Iterable[str], partitions: int) -> None:
    """Round-robins the values over the partitions, acks=all."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i, value in enumerate(values):
        producer.produce(topic, value=value.encode(), partition=i % partitions)
    assert producer.flush(10) == 0


def confluent_consumer(bootstrap: str, group: str, **extra: object) -> Consumer:
    config: dict[str, object] = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        **FAST_GROUP,
        **extra,
    }
    return Consumer(config)


def poll_until(
    consumers: list[Consumer],
    done: Callable[[], bool],
    sink: Callable[[Consumer, str, int, int, str], None] | None = None,
    timeout: float = 30.0,
    what: str = "condition",
) -> None:
    """Polls every consumer in turn (each must be polled to take part in rebalances)."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        for consumer in consumers:
            msg = consumer.poll(0.05)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            if sink is not None:
                topic, partition, offset, value = (
                    msg.topic(), msg.partition(), msg.offset(), msg.value()
                )  # fmt: skip
                # a message without an error always has all four
                assert topic is not None and partition is not None and offset is not None
                assert value is not None
                sink(consumer, topic, partition, offset, value.decode())
