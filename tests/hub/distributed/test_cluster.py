"""Three workers on a three-broker cluster (ZooKeeper): the broker coordinating the workers'
group and a worker are killed together, and a file pipeline through both losses loses no line
(issue 20: the same against a three-broker cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.broker.cluster.cluster import Cluster
from tests.fixtures.broker import wait_until
from tests.hub.distributed.conftest import Group
from tests.hub.distributed.test_workers import _lines, _sink, _source


@pytest.fixture
def cluster(tmp_path: Path, zk_chroot: str) -> Iterator[Cluster]:
    (tmp_path / "brokers").mkdir()
    c = Cluster(tmp_path / "brokers", zk_chroot)
    try:
        c.start()
        yield c
    finally:
        c.stop()


def _coordinator(bootstrap: str, group_id: str) -> int:
    """The broker id coordinating ``group_id`` (FindCoordinator, through kafka-python)."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","))

    async def find() -> dict[str, int]:
        found: dict[str, int] = await admin._find_coordinator_ids([group_id])
        return found

    try:
        return int(admin._manager.run(find)[group_id])
    finally:
        admin.close()


@pytest.mark.slow  # ~3 min on two cores: three brokers, ZooKeeper and three workers
@pytest.mark.timeout(600)
def test_worker_and_group_coordinator_killed_together(cluster: Cluster, tmp_path: Path) -> None:
    group = Group(cluster, tmp_path)
    try:
        for _ in range(3):
            group.add(**{"replication.factor": 3})
        group.wait_stable(3, timeout=90)
        cluster.create_topic("lines", partitions=1, rf=3)
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        total = 2000
        source.write_text("".join(f"line-{i}\n" for i in range(total // 2)))
        via = group.workers[0]
        via.call("POST", "/connectors", _source("src", source, "lines"))
        via.call("POST", "/connectors", _sink("snk", sink, "lines"))
        wait_until(lambda: len(_lines(sink)) > 0, 90, "first lines in the sink")
        coordinator = _coordinator(cluster.bootstrap, "test-workers")
        group.owner("src-0").kill()
        cluster.brokers[coordinator].kill()
        with open(source, "a") as f:
            f.write("".join(f"line-{i}\n" for i in range(total // 2, total)))
        group.wait_stable(2, timeout=300)
        expected = {f"line-{i}" for i in range(total)}
        wait_until(lambda: set(_lines(sink)) >= expected, 300, "every line after both kills")
    finally:
        for worker in group.workers:
            if worker.running:
                worker.stop()
