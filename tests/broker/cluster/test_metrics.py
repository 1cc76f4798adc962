"""Replication metrics of a real three-broker cluster, scraped from each broker's metrics port:
one active controller, an under-replicated partition and an ISR shrink while a follower is
paused, an expansion once it catches up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.broker.cluster.cluster import Cluster
from tests.fixtures.hub import free_port
from tests.fixtures.prometheus import scrape, value


@pytest.fixture
def metered_cluster(tmp_path: Path, zk_chroot: str) -> Iterator[Cluster]:
    c = Cluster(tmp_path, zk_chroot)
    for b in c.brokers.values():
        b.metrics_port = free_port()  # type: ignore[attr-defined]
        b.extra_args = (*b.extra_args, "--metrics-port", str(b.metrics_port))  # type: ignore[attr-defined]
    try:
        c.start()
        yield c
    finally:
        c.stop()


def _metric(c: Cluster, broker_id: int, name: str) -> float:
    port = c.brokers[broker_id].metrics_port  # type: ignore[attr-defined]
    found = value(scrape(f"http://127.0.0.1:{port}/metrics"), name)
    assert found is not None, name
    return found


def test_controller_under_replication_and_isr_changes(
    metered_cluster: Cluster, topic_name: str
) -> None:
    c = metered_cluster
    c.create_topic(topic_name, partitions=1, rf=3)
    c.wait(lambda: len(c.isr(topic_name, 0)) == 3, "full ISR")
    controllers = "kafka_controller_kafkacontroller_activecontrollercount"
    c.wait(lambda: sum(_metric(c, i, controllers) for i in c.brokers) == 1, "one controller")
    leader = c.leader(topic_name, 0)
    under = "kafka_server_replicamanager_underreplicatedpartitions"
    assert _metric(c, leader, under) == 0
    shrinks = _metric(c, leader, "kafka_server_replicamanager_isrshrinks_total")
    expands = _metric(c, leader, "kafka_server_replicamanager_isrexpands_total")
    follower = next(b for b in c.brokers.values() if b.broker_id != leader)
    follower.pause()
    try:
        c.wait(lambda: _metric(c, leader, under) == 1, "under-replicated on the leader", 30)
        assert follower.broker_id not in c.isr(topic_name, 0)
        assert _metric(c, leader, "kafka_server_replicamanager_isrshrinks_total") >= shrinks + 1
        assert _metric(c, leader, "kafka_controller_kafkacontroller_offlinepartitionscount") == 0
    finally:
        follower.resume()
    c.wait(lambda: _metric(c, leader, under) == 0, "caught up", 30)
    assert _metric(c, leader, "kafka_server_replicamanager_isrexpands_total") >= expands + 1
    assert _metric(c, leader, "kafka_server_replicamanager_leadercount") >= 1
