"""The wake-ups that keep acks=all end-to-end latency short (docs/cluster.md, Latency).

A record produced with acks=all travels leader -> followers -> leader (high watermark) ->
consumer. Every hop must be an immediate wake-up, never the end of a long poll: the followers'
parked fetches wake on the leader's append, the consumer's parked fetch wakes when the high
watermark moves. Both long polls are set to 20 s here, so a missing wake-up shows as a record
arriving after ~20 s instead of within the bound.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.broker.cluster.cluster import Cluster

LONG_POLL_MS = 20_000
BOUND_S = 5.0  # generous for a busy 2-core machine; a missed wake-up costs LONG_POLL_MS


def test_acks_all_record_reaches_a_long_polling_consumer_without_waiting_out_a_poll(
    tmp_path: Path, zk_chroot: str
) -> None:
    c = Cluster(tmp_path, zk_chroot, 3, "-o", f"replica.fetch.wait.max.ms={LONG_POLL_MS}",
                "-o", f"replica.lag.time.max.ms={2 * LONG_POLL_MS}")  # fmt: skip
    topic = "wakeups"
    try:
        c.start()
        c.create_topic(topic, partitions=1, rf=3, **{"min.insync.replicas": "3"})
        c.wait(lambda: len(c.isr(topic, 0)) == 3, "full ISR")
        consumer = Consumer({
            "bootstrap.servers": c.bootstrap, "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False, "fetch.wait.max.ms": LONG_POLL_MS,
            "auto.offset.reset": "earliest",
        })  # fmt: skip
        consumer.assign([TopicPartition(topic, 0, 0)])
        producer = Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "linger.ms": 0})
        try:
            for i in range(5):
                # Let both long polls park first (followers and consumer idle), then produce.
                consumer.poll(0.5)
                started = time.monotonic()
                producer.produce(topic, value=f"r{i}".encode(), partition=0)
                assert producer.flush(BOUND_S) == 0, f"record {i} not acknowledged in time"
                acked = time.monotonic() - started
                msg = None
                while msg is None and time.monotonic() - started < BOUND_S:
                    msg = consumer.poll(0.05)
                took = time.monotonic() - started
                assert msg is not None and msg.error() is None, f"record {i}: {msg}"
                assert msg.value() == f"r{i}".encode() and msg.offset() == i
                assert acked < BOUND_S and took < BOUND_S, (i, acked, took)
        finally:
            consumer.close()
    finally:
        c.stop()


def test_pipelined_acks_all_produces_are_answered_in_order(
    shared_cluster: Cluster, topic_name: str
) -> None:
    """librdkafka at linger.ms=0 pipelines many acks=all produces on one connection; their
    responses complete together when the high watermark moves and are written together, in
    request order (librdkafka fails the connection on a reordered response)."""
    c = shared_cluster
    c.create_topic(topic_name, partitions=1, rf=3)
    c.wait(lambda: len(c.isr(topic_name, 0)) == 3, "full ISR")
    producer = Producer({
        "bootstrap.servers": c.bootstrap, "acks": "all", "linger.ms": 0,
        "batch.num.messages": 1, "max.in.flight.requests.per.connection": 1000,
        "enable.idempotence": False,
    })  # fmt: skip
    offsets: list[int] = []
    errors: list[object] = []

    def on_delivery(err: object, msg: object) -> None:
        if err is not None:
            errors.append(err)
        else:
            offsets.append(msg.offset())  # type: ignore[attr-defined]

    total = 2000
    for i in range(total):
        producer.produce(topic_name, value=str(i).encode(), partition=0, on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert errors == []
    assert offsets == list(range(total))
