"""A data dir never joins the wrong cluster: its topics are not mirrored (and so deleted)."""

from __future__ import annotations

import uuid
from pathlib import Path

from confluent_kafka import Producer

from tests.fixtures.broker import BrokerProcess
from tests.fixtures.zookeeper import ZooKeeperServer


def test_single_node_data_dir_is_refused_by_a_new_cluster(
    tmp_path: Path, zookeeper: ZooKeeperServer
) -> None:
    single = BrokerProcess(tmp_path / "data")
    single.start()
    producer = Producer({"bootstrap.servers": single.bootstrap})
    producer.produce("kept", b"record")
    assert producer.flush(10) == 0
    assert single.stop() == 0
    chroot = f"{zookeeper.connect}/t-{uuid.uuid4().hex[:8]}"
    clustered = BrokerProcess(tmp_path / "data", "--zookeeper", chroot)
    try:
        clustered.start()
        raise AssertionError("a cluster broker adopted a single-node data dir")
    except AssertionError as exc:
        assert "cannot adopt them" in str(exc), str(exc)[-2000:]
    assert any((tmp_path / "data" / "kept-0").glob("*.log"))
    assert (tmp_path / "data" / "kept-0" / "00000000000000000000.log").stat().st_size > 0
