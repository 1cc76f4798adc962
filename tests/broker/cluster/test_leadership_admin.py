"""Preferred-leader election (``sluice topics elect-leaders``) and replica reassignment
(``sluice topics reassign``) while a producer keeps going."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.broker.cluster.cluster import Cluster


def _sluice(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "sluice", *args], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_elect_leaders_moves_leadership_back(cluster: Cluster, topic_name: str) -> None:
    c = cluster
    c.create_topic(topic_name, partitions=1, rf=3)
    c.wait(lambda: len(c.isr(topic_name, 0)) == 3, "full ISR")
    preferred = c.brokers[c.leader(topic_name, 0)]  # a new topic starts on its first replica
    preferred.stop()  # controlled shutdown moves leadership away
    c.wait(lambda: c.leader(topic_name, 0) != preferred.broker_id, "leadership moved")
    preferred.start()
    c.wait(lambda: preferred.broker_id in c.isr(topic_name, 0), "back in sync", 60)
    assert c.leader(topic_name, 0) != preferred.broker_id
    output = _sluice("topics", "elect-leaders", "--topic", topic_name, "-b", c.bootstrap)
    assert f"{topic_name}-0: elected" in output
    assert c.leader(topic_name, 0) == preferred.broker_id
    again = _sluice("topics", "elect-leaders", "--topic", topic_name, "-b", c.bootstrap)
    assert "already preferred" in again


def test_reassignment_while_producing(cluster: Cluster, topic_name: str) -> None:
    c = cluster
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic as KafkaNewTopic

    kadmin = KafkaAdminClient(bootstrap_servers=c.bootstrap.split(","))
    kadmin.create_topics([KafkaNewTopic(topic_name, -1, -1, replica_assignments={0: [1, 2]})])
    kadmin.close()
    c.wait(lambda: sorted(c.isr(topic_name, 0)) == [1, 2], "ISR of the first assignment")
    stop = threading.Event()
    acked: list[int] = []
    errors: list[object] = []

    def produce() -> None:
        producer = Producer({"bootstrap.servers": c.bootstrap, "acks": "all",
                             "enable.idempotence": True, "linger.ms": 2})  # fmt: skip
        i = 0
        while not stop.is_set() or i < 2000:
            producer.produce(topic_name, value=str(i).encode(), on_delivery=lambda e, m: (
                errors.append(e) if e else acked.append(int(m.value()))))  # fmt: skip
            producer.poll(0)
            i += 1
            if i % 200 == 0:
                producer.flush(30)
        producer.flush(60)

    thread = threading.Thread(target=produce)
    thread.start()
    try:
        output = _sluice("topics", "reassign", topic_name, "--partition", "0",
                         "--replicas", "3,1", "-b", c.bootstrap)  # fmt: skip
        assert "done" in output
    finally:
        stop.set()
        thread.join(120)
    assert errors == []
    raw, _ = c._zk.get(f"/brokers/topics/{topic_name}")
    assert json.loads(raw)["partitions"]["0"] == [3, 1]
    assert sorted(c.isr(topic_name, 0)) == [1, 3]
    consumer = Consumer({"bootstrap.servers": c.bootstrap, "group.id": "r",
                         "enable.auto.commit": False})  # fmt: skip
    consumer.assign([TopicPartition(topic_name, 0, 0)])
    got: list[int] = []
    while len(got) < len(acked):
        msg = consumer.poll(10)
        assert msg is not None, f"stalled at {len(got)} of {len(acked)}"
        if not msg.error():
            got.append(int(msg.value()))
    consumer.close()
    assert sorted(got) == sorted(acked) and len(set(got)) == len(got)
    c.wait(lambda: not any(c.brokers[2].data_dir.joinpath(f"{topic_name}-0").glob("0*[1-9]*.log"))
           and _size(c.brokers[2], topic_name) == 0, "broker 2 dropped its copy")  # fmt: skip


def _size(b: object, topic: str) -> int:
    return sum(f.stat().st_size for f in (b.data_dir / f"{topic}-0").glob("*.log"))  # type: ignore[attr-defined]


def test_auto_leader_rebalance(tmp_path: object, zk_chroot: str, topic_name: str) -> None:
    from pathlib import Path

    c = Cluster(
        Path(str(tmp_path)), zk_chroot, 3, "-o", "leader.imbalance.check.interval.seconds=1"
    )
    try:
        c.start()
        c.create_topic(topic_name, partitions=1, rf=3)
        c.wait(lambda: len(c.isr(topic_name, 0)) == 3, "full ISR")
        preferred = c.brokers[c.leader(topic_name, 0)]
        preferred.stop()
        c.wait(lambda: c.leader(topic_name, 0) != preferred.broker_id, "leadership moved")
        preferred.start()
        c.wait(lambda: c.leader(topic_name, 0) == preferred.broker_id, "automatic return", 60)
    finally:
        c.stop()
