"""SIGTERM = controlled shutdown: leadership moves to other in-sync replicas before the broker
stops, so producers see a leader change, not a dead leader."""

from __future__ import annotations

from confluent_kafka import Producer

from tests.broker.cluster.cluster import Cluster


def test_sigterm_moves_leadership_before_stopping(cluster: Cluster, topic_name: str) -> None:
    c = cluster
    c.create_topic(topic_name, partitions=3, rf=3)
    for p in range(3):
        c.wait(lambda p=p: len(c.isr(topic_name, p)) == 3, "full ISR")
    victim = c.brokers[c.leader(topic_name, 0)]
    led = [p for p in range(3) if c.leader(topic_name, p) == victim.broker_id]
    assert victim.stop() == 0
    log = victim.log()
    assert "controlled shutdown done" in log, log[-3000:]
    # its ephemeral registration is gone at once (clean session close), leaders already moved
    assert victim.broker_id not in c.live_ids()
    for p in led:
        state = c.state(topic_name, p)
        assert state["leader"] not in (victim.broker_id, -1)
        assert victim.broker_id not in state["isr"]
    producer = Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "linger.ms": 0})
    for i in range(30):
        producer.produce(topic_name, value=str(i).encode(), partition=i % 3)
    assert producer.flush(30) == 0
