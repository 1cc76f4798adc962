"""Standalone workers refuse internal topics a live group owns (issue 20).

A standalone worker (``sluice up``'s hub) holds its ``group.id`` as a member while it runs; a
second standalone worker, or a distributed one, on the same group and topics refuses to start
with one line naming the group, instead of running every connector a second time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hub.runtime.config import WorkerConfig
from hub.runtime.errors import TopicsOwnedError
from sluice.node import Node, NodeConfig
from tests.fixtures.broker import BrokerProcess
from tests.fixtures.hub import free_port
from tests.fixtures.workers import group_settings


def _node(broker: BrokerProcess, tmp_path: Path, name: str, **kwargs: Any) -> Node:
    settings = {
        **group_settings(tmp_path),
        "bootstrap.servers": broker.bootstrap,
        "rest.port": free_port(),
        "data.dir": str(tmp_path / name),
    }
    return Node(NodeConfig(worker=WorkerConfig.from_mapping(settings), **kwargs))


def test_a_second_standalone_worker_is_refused(fresh_broker: BrokerProcess, tmp_path: Path) -> None:
    first = _node(fresh_broker, tmp_path, "a")
    first.start()
    try:
        second = _node(fresh_broker, tmp_path, "b")
        with pytest.raises(TopicsOwnedError) as refused:
            second.start()
        message = str(refused.value)
        assert "another standalone worker" in message and "'test-workers'" in message
        assert "\n" not in message
        assert second.herder is None  # nothing of it started
        distributed = _node(fresh_broker, tmp_path, "c", distributed=True)
        with pytest.raises(TopicsOwnedError, match="a standalone worker"):
            distributed.start()
    finally:
        first.stop()
    # Stopped cleanly, it left the group: the topics are free again.
    again = _node(fresh_broker, tmp_path, "d")
    again.start()
    again.stop()


def test_standalone_is_refused_beside_a_distributed_group(group_of: Any, tmp_path: Path) -> None:
    group = group_of(1)
    standalone = _node(group.broker, tmp_path, "s")
    with pytest.raises(TopicsOwnedError, match="a distributed worker group"):
        standalone.start()
