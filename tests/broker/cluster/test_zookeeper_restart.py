"""A ZooKeeper restart under a running cluster: brokers reconnect, nothing changes hands
needlessly, and produce/consume keep working."""

from __future__ import annotations

from confluent_kafka import Producer

from tests.broker.cluster.cluster import Cluster
from tests.fixtures.zookeeper import ZooKeeperServer


def test_cluster_survives_a_zookeeper_restart(
    cluster: Cluster, zookeeper: ZooKeeperServer, topic_name: str
) -> None:
    c = cluster
    c.create_topic(topic_name, partitions=2, rf=3)
    producer = Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "linger.ms": 0,
                         "message.timeout.ms": 60_000})  # fmt: skip
    for i in range(100):
        producer.produce(topic_name, value=str(i).encode())
    assert producer.flush(30) == 0
    zookeeper.restart()
    c._zk.stop()
    c._zk.start(timeout=30)
    c.wait(lambda: c.live_ids() == {1, 2, 3}, "all brokers registered again", 60)
    errors: list[object] = []
    for i in range(100):
        producer.produce(topic_name, value=str(i).encode(),
                         on_delivery=lambda err, msg: err and errors.append(err))  # fmt: skip
    assert producer.flush(60) == 0
    assert errors == []
    for p in range(2):
        c.wait(lambda p=p: len(c.isr(topic_name, p)) == 3, "full ISR after the restart", 60)
