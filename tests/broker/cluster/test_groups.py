"""Consumer groups in the cluster: the coordinator is the leader of the group's
``__consumer_offsets`` partition, and a coordinator failover keeps every committed offset."""

from __future__ import annotations

from confluent_kafka import Consumer, Producer

from broker.coordinator.offsets_topic import partition_for
from tests.broker.cluster.cluster import Cluster


def _consumer(c: Cluster, group: str) -> Consumer:
    return Consumer({
        "bootstrap.servers": c.bootstrap, "group.id": group, "enable.auto.commit": False,
        "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
    })  # fmt: skip


def _poll(consumer: Consumer, n: int) -> list[object]:
    out: list[object] = []
    for _ in range(600):
        if len(out) >= n:
            break
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            out.append(msg)
    assert len(out) >= n, f"got {len(out)} of {n}"
    return out


def test_coordinator_failover_keeps_committed_offsets(cluster: Cluster, topic_name: str) -> None:
    c = cluster
    group = f"g-{topic_name}"
    c.create_topic(topic_name, partitions=1, rf=3)
    producer = Producer({"bootstrap.servers": c.bootstrap, "acks": "all"})
    for i in range(100):
        producer.produce(topic_name, value=str(i).encode())
    assert producer.flush(30) == 0

    first = _consumer(c, group)
    first.subscribe([topic_name])
    msgs = _poll(first, 60)
    first.commit(message=msgs[59], asynchronous=False)  # committed offset 60
    first.close()

    coordinator = c.leader("__consumer_offsets", partition_for(group, 3))
    assert len(c.isr("__consumer_offsets", partition_for(group, 3))) >= 2
    c.brokers[coordinator].kill()
    c.wait(
        lambda: c.leader("__consumer_offsets", partition_for(group, 3)) not in (coordinator, -1),
        "a new coordinator", 40,
    )  # fmt: skip

    second = _consumer(c, group)
    second.subscribe([topic_name])
    resumed = _poll(second, 1)
    assert resumed[0].offset() == 60  # type: ignore[attr-defined]
    second.close()
