"""Replication rules: ISR shrink/expand, min.insync.replicas, divergent-tail truncation."""

from __future__ import annotations

import filecmp
from pathlib import Path

from confluent_kafka import KafkaError, Producer

from tests.broker.cluster.cluster import Cluster


def _produce(c: Cluster, topic: str, n: int, acks: str, retries: int = 1000) -> list[object]:
    """Produces ``n`` records to partition 0; returns the delivery errors."""
    timeout_ms = 30_000
    producer = Producer({"bootstrap.servers": c.bootstrap, "acks": acks, "linger.ms": 0,
                         "message.timeout.ms": timeout_ms, "retry.backoff.ms": 100,
                         "retries": retries})  # fmt: skip
    errors: list[object] = []
    for i in range(n):
        producer.produce(topic, value=f"{acks}-{i}".encode(), partition=0,
                         on_delivery=lambda err, msg: err and errors.append(err))  # fmt: skip
    producer.flush(timeout_ms / 1000 + 10)
    return errors


def test_isr_shrinks_and_expands_and_min_insync_is_enforced(
    cluster: Cluster, topic_name: str
) -> None:
    c = cluster
    c.create_topic(topic_name, partitions=1, rf=3, **{"min.insync.replicas": "2"})
    c.wait(lambda: len(c.isr(topic_name, 0)) == 3, "full ISR")
    leader = c.leader(topic_name, 0)
    f1, f2 = [b for b in c.brokers.values() if b.broker_id != leader]
    f1.pause()
    c.wait(lambda: f1.broker_id not in c.isr(topic_name, 0), "ISR shrink after lag", 30)
    assert _produce(c, topic_name, 10, "all") == []  # ISR of 2 still meets min.insync=2
    f2.pause()
    c.wait(lambda: c.isr(topic_name, 0) == [leader], "ISR down to the leader", 30)
    errors = _produce(c, topic_name, 3, "all", retries=0)  # see the broker's own error
    assert errors and all(e.code() == KafkaError.NOT_ENOUGH_REPLICAS for e in errors), errors
    assert _produce(c, topic_name, 3, "1") == []  # acks=1 does not need the ISR
    f1.resume()
    f2.resume()
    c.wait(lambda: len(c.isr(topic_name, 0)) == 3, "ISR expands when followers catch up", 60)
    assert _produce(c, topic_name, 10, "all") == []


def test_returning_replica_truncates_its_divergent_tail(tmp_path: Path, zk_chroot: str) -> None:
    """The KIP-101 case: the old leader holds records no other replica has (written with
    acks=1 after its followers fell out of the ISR), loses leadership while cut off, and must
    drop them when it returns. The followers stay paused until the leader has shrunk the ISR,
    so no parked fetch can still carry those records to them; leadership then has to pass to
    an out-of-sync replica, hence unclean election in this test's cluster."""
    c = Cluster(tmp_path, zk_chroot, 3, "-o", "unclean.leader.election.enable=true")
    topic = "divergent"
    try:
        c.start()
        c.create_topic(topic, partitions=1, rf=3)
        c.wait(lambda: len(c.isr(topic, 0)) == 3, "full ISR")
        assert _produce(c, topic, 50, "all") == []
        old = c.brokers[c.leader(topic, 0)]
        followers = [b for b in c.brokers.values() if b is not old]
        for f in followers:
            f.pause()
        c.wait(lambda: c.isr(topic, 0) == [old.broker_id], "ISR shrunk to the leader", 30)
        producer = Producer({"bootstrap.servers": old.bootstrap, "acks": "1", "linger.ms": 0})
        for i in range(20):
            producer.produce(topic, value=f"divergent-{i}".encode(), partition=0)
        assert producer.flush(10) == 0
        old.pause()
        for f in followers:
            f.resume()
        c.wait(lambda: c.leader(topic, 0) not in (old.broker_id, -1), "a new leader", 40)
        new = c.brokers[c.leader(topic, 0)]
        assert _produce(c, topic, 30, "all") == []
        old.resume()
        c.wait(lambda: "truncating divergent tail" in old.log(), "the old leader truncates", 60)
        # byte-identical replicas: the divergent records are gone, the new epoch's are there
        c.wait(lambda: _same_log(old, new, topic), "the old leader's log equals the new one")
    finally:
        c.stop()


def _same_log(a: object, b: object, topic: str) -> bool:
    da = a.data_dir / f"{topic}-0"  # type: ignore[attr-defined]
    db = b.data_dir / f"{topic}-0"  # type: ignore[attr-defined]
    la, lb = sorted(da.glob("*.log")), sorted(db.glob("*.log"))
    return [p.name for p in la] == [p.name for p in lb] and all(
        filecmp.cmp(x, y, shallow=False) for x, y in zip(la, lb, strict=True)
    )
