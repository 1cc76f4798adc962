"""Pipelines live under the data directory, not under whatever directory the hub started in."""

from __future__ import annotations

import os
from pathlib import Path

from hub.runtime.config import WorkerConfig
from sluice.node import Node, NodeConfig
from tests.fixtures.hub import HubProcess
from tests.spark_pipelines.test_rest_pipelines import CONFIG


def test_the_default_is_pipelines_under_data_dir(tmp_path: Path) -> None:
    worker = WorkerConfig.from_mapping({"data.dir": str(tmp_path / "state")})
    assert Node(NodeConfig(worker=worker)).pipelines_home() == tmp_path / "state" / "pipelines"
    chosen = tmp_path / "elsewhere"
    assert Node(NodeConfig(worker=worker, pipelines_dir=chosen)).pipelines_home() == chosen


def test_sluice_up_keeps_pipelines_in_its_data_dir(hub: HubProcess) -> None:
    assert hub.proc is not None
    cwd = Path(os.readlink(f"/proc/{hub.proc.pid}/cwd"))
    assert hub.data_dir.parent != cwd  # the hub runs elsewhere than its data directory
    config = {**CONFIG, "checkpoint_dir": str(hub.data_dir / "ck")}
    status, body = hub.request(
        "POST", "/pipelines", {"name": "daily", "template": "log_aggregation", "config": config}
    )
    assert status == 201, body
    saved = hub.data_dir / "pipelines" / "pipelines.json"
    assert "daily" in saved.read_text()
    stray = cwd / "data" / "pipelines" / "pipelines.json"
    assert not stray.exists() or "daily" not in stray.read_text()
