from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.broker.cluster.cluster import Cluster
from tests.fixtures.zookeeper import ZooKeeperServer


@pytest.fixture
def cluster(tmp_path: Path, zk_chroot: str) -> Iterator[Cluster]:
    """Three fresh brokers per test (tests kill and pause them)."""
    c = Cluster(tmp_path, zk_chroot)
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def shared_cluster(
    tmp_path_factory: pytest.TempPathFactory, zookeeper: ZooKeeperServer
) -> Iterator[Cluster]:
    """Three brokers shared by a module's tests that do not break them."""
    import uuid

    c = Cluster(tmp_path_factory.mktemp("cluster"), f"{zookeeper.connect}/m-{uuid.uuid4().hex[:8]}")
    try:
        c.start()
        yield c
    finally:
        c.stop()
