"""``sluice up`` end to end: broker + worker + REST in one process, restarts and kill -9.

Uses the built-in file connectors through their Kafka Connect class names, exactly as Kafka
Connect's quickstart posts them; skipped if that package is not installed.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import HubProcess

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _file_pipeline(hub: HubProcess, tmp_path: Path, lines: int) -> tuple[Path, Path]:
    status, plugins = hub.request("GET", "/connector-plugins")
    assert status == 200 and {SOURCE, SINK} <= {p["class"] for p in plugins}, plugins
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(lines)))
    for name, config in (
        ("local-file-source", {"connector.class": SOURCE, "file": str(source), "topic": "lines"}),
        ("local-file-sink", {"connector.class": SINK, "file": str(sink), "topics": "lines"}),
    ):
        status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
        assert status == 201, body
    return source, sink


def test_up_restart_resumes_connectors_exactly(hub_factory, tmp_path: Path) -> None:
    hub = hub_factory(**{"offset.flush.interval.ms": 200})
    status, root = hub.request("GET", "/")
    assert status == 200 and root["kafka_cluster_id"]
    source, sink = _file_pipeline(hub, tmp_path, 5000)
    wait_until(lambda: len(_lines(sink)) >= 5000, 30, "5000 lines in the sink file")

    assert hub.stop() == 0
    assert "hub stopped" in hub.log(since_start=True)
    with open(source, "a") as f:
        f.write("".join(f"line-{i}\n" for i in range(5000, 6000)))
    hub.start()
    status, names = hub.request("GET", "/connectors")
    assert sorted(names) == ["local-file-sink", "local-file-source"]
    wait_until(lambda: len(_lines(sink)) >= 6000, 30, "6000 lines")
    assert _lines(sink) == [f"line-{i}" for i in range(6000)]
    _, state = hub.request("GET", "/connectors/local-file-source/status")
    assert state["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in state["tasks"]] == ["RUNNING"]


@pytest.mark.slow  # the kill -9 e2e tests cover it (~15 s)
def test_up_kill_9_loses_nothing(hub_factory, tmp_path: Path) -> None:
    hub = hub_factory(**{"offset.flush.interval.ms": 100})
    total = 20_000
    _, sink = _file_pipeline(hub, tmp_path, total)
    wait_until(lambda: len(_lines(sink)) > 0, 30, "first lines")
    hub.kill()
    hub.start()
    expected = {f"line-{i}" for i in range(total)}
    wait_until(lambda: set(_lines(sink)) >= expected, 60, "every line after kill -9")
    duplicates = sum(c - 1 for c in collections.Counter(_lines(sink)).values())
    assert duplicates < total


def test_connect_runs_a_worker_against_an_existing_cluster(hub_broker, tmp_path: Path) -> None:
    """``sluice connect``: no embedded broker; SIGTERM exits cleanly."""
    import os
    import signal
    import subprocess
    import sys

    import hub.rest.app  # noqa: F401  (a broken import must fail, not skip)
    from tests.fixtures.hub import free_port

    port = free_port()
    log = tmp_path / "connect.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "connect", "--bootstrap", hub_broker.bootstrap,
             "--rest-port", str(port), "--data-dir", str(tmp_path / "data")],
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    try:
        wait_until(lambda: "hub listening" in log.read_text(), 30, "hub listening")
        assert f"address=127.0.0.1:{port}" in log.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()[-3000:]
    assert "hub stopped" in log.read_text()
    assert (tmp_path / "data" / "hub.token").exists()  # sluice connect's generated token
