"""Transactions in a 3-broker cluster: a transaction spans partitions led by different brokers
(markers travel as WriteTxnMarkers), offsets committed in it reach the group coordinator, and
it survives a kill -9 of its coordinator's broker: the new leader of its
``__transaction_state`` partition loads it and the commit completes, all or nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from broker.coordinator.offsets_topic import partition_for
from tests.broker.cluster.cluster import Cluster
from tests.broker.transaction.helpers import TIMEOUT, end_offsets, read_all, values

TXN_PARTITIONS = 3


@pytest.fixture
def txn_cluster(tmp_path: Path, zk_chroot: str) -> Iterator[Cluster]:
    c = Cluster(
        tmp_path, zk_chroot, 3, "-o", f"transaction.state.log.num.partitions={TXN_PARTITIONS}"
    )
    try:
        c.start()
        yield c
    finally:
        c.stop()


def _spread(c: Cluster, topic: str) -> None:
    """Creates ``topic`` with 3 partitions whose leaders are 3 different brokers."""
    c.create_topic(topic, 3, 3)
    assert {c.leader(topic, p) for p in range(3)} == {1, 2, 3}


def test_a_transaction_spans_leaders_and_survives_its_coordinators_death(txn_cluster, topic_name):
    c = txn_cluster
    _spread(c, topic_name)
    p = Producer({"bootstrap.servers": c.bootstrap, "transactional.id": topic_name,
                  "log_level": 0, "transaction.timeout.ms": 60_000})  # fmt: skip
    p.init_transactions(TIMEOUT)
    p.begin_transaction()
    for i in range(30):
        p.produce(topic_name, b"first%02d" % i, partition=i % 3)
    p.commit_transaction(TIMEOUT)
    assert sorted(values(read_all(c.bootstrap, topic_name, 3))) == sorted(
        b"first%02d" % i for i in range(30)
    )

    p.begin_transaction()
    for i in range(30):
        p.produce(topic_name, b"second%02d" % i, partition=i % 3)
    p.flush(TIMEOUT)
    state_partition = partition_for(topic_name, TXN_PARTITIONS)
    coordinator = c.leader("__transaction_state", state_partition)
    c.brokers[coordinator].kill()
    c.wait(lambda: c.leader("__transaction_state", state_partition) not in (-1, coordinator),
           "a new transaction coordinator", 60)  # fmt: skip
    p.commit_transaction(90)  # retried against the new coordinator, which loaded it
    committed = values(read_all(c.bootstrap, topic_name, 3))
    assert sorted(committed) == sorted(
        [b"first%02d" % i for i in range(30)] + [b"second%02d" % i for i in range(30)]
    )
    for partition in range(3):
        lso, hw = end_offsets(c.bootstrap, topic_name, partition)
        assert lso == hw


def test_offsets_committed_in_a_transaction_reach_the_group(txn_cluster, topic_name):
    c = txn_cluster
    _spread(c, topic_name)
    group = f"{topic_name}-g"
    consumer = Consumer({"bootstrap.servers": c.bootstrap, "group.id": group, "log_level": 0,
                         "enable.auto.commit": False})  # fmt: skip
    p = Producer({"bootstrap.servers": c.bootstrap, "transactional.id": topic_name,
                  "log_level": 0})  # fmt: skip
    try:
        p.init_transactions(TIMEOUT)
        p.begin_transaction()
        p.produce(topic_name, b"out", partition=2)
        offsets = [TopicPartition(topic_name, q, 5 + q) for q in range(3)]
        p.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), TIMEOUT)
        p.commit_transaction(TIMEOUT)
        c.wait(lambda: [t.offset for t in consumer.committed(
            [TopicPartition(topic_name, q) for q in range(3)], TIMEOUT)] == [5, 6, 7],
            "the committed offsets")  # fmt: skip
        assert values(read_all(c.bootstrap, topic_name, 3)) == [b"out"]
    finally:
        consumer.close()
