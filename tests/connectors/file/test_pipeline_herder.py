"""Integration: file source -> broker -> file sink through the REST API of an in-process
Herder (the real runtime) and a real broker subprocess.

Configs are POSTed as Kafka Connect's quickstart does. Restarting the hub is modelled by
stopping the Herder and starting a new one over the same internal topics; the kill -9 variant
lives with the ``sluice up`` end-to-end tests.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hub import rest
from hub.runtime import config as config_module
from hub.runtime import herder as herder_module
from tests.fixtures.broker import BrokerProcess, wait_until
from tests.fixtures.rest_auth import TOKEN, authed


class Hub:
    """A Herder + REST app over fixed internal topics, restartable."""

    def __init__(self, bootstrap: str, files_root: Path) -> None:
        unique = uuid.uuid4().hex[:8]
        self.config = config_module.WorkerConfig.from_mapping(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"file-it-{unique}",
                "config.storage.topic": f"file-it-configs-{unique}",
                "offset.storage.topic": f"file-it-offsets-{unique}",
                "status.storage.topic": f"file-it-status-{unique}",
                "offset.flush.interval.ms": 200,
                "rest.auth.token": TOKEN,
                "file.allowed.paths": str(files_root),
            }
        )
        self.herder: Any = None
        self.client: TestClient | None = None

    def start(self) -> TestClient:
        self.herder = herder_module.Herder(self.config)
        self.herder.start()
        self.client = authed(rest.create_app(self.herder, self.config))
        return self.client

    def stop(self) -> None:
        if self.herder is not None:
            self.herder.stop()
            self.herder = None


@pytest.fixture
def inproc_hub(broker: BrokerProcess, tmp_path: Path) -> Iterator[Callable[[], Hub]]:
    hubs: list[Hub] = []

    def make() -> Hub:
        h = Hub(broker.bootstrap, tmp_path)
        hubs.append(h)
        return h

    yield make
    for h in hubs:
        h.stop()


def create(api: TestClient, name: str, config: dict[str, str]) -> None:
    response = api.post("/connectors", json={"name": name, "config": config})
    assert response.status_code == 201, response.text


def lines_in(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def append(path: Path, lines: list[str]) -> None:
    with open(path, "a") as f:
        f.write("".join(line + "\n" for line in lines))


def wait_for_lines(path: Path, count: int, timeout: float = 60) -> list[str]:
    wait_until(lambda: len(lines_in(path)) >= count, timeout, f"{count} lines in {path.name}")
    return lines_in(path)


def start_pipeline(api: TestClient, source: Path, sink: Path, topic: str) -> None:
    create(
        api,
        "local-file-source",
        {"connector.class": "FileStreamSource", "tasks.max": "1", "file": str(source),
         "topic": topic, "poll.interval.ms": "50"},
    )  # fmt: skip
    create(
        api,
        "local-file-sink",
        {"connector.class": "FileStreamSink", "tasks.max": "1", "file": str(sink),
         "topics": topic},
    )  # fmt: skip


def test_lines_flow_exactly_once_across_a_hub_restart(inproc_hub, tmp_path: Path) -> None:
    source, sink = tmp_path / "test.txt", tmp_path / "test.sink.txt"
    topic = f"connect-test-{uuid.uuid4().hex[:8]}"
    written = [f"line {i}" for i in range(5000)]
    append(source, written[:3000])
    h = inproc_hub()
    api = h.start()
    start_pipeline(api, source, sink, topic)
    wait_for_lines(sink, 3000)
    h.stop()
    append(source, written[3000:])  # written while the hub is down
    h.start()
    got = wait_for_lines(sink, 5000)
    assert got == written


def test_rotation_while_tailing(inproc_hub, tmp_path: Path) -> None:
    source, sink = tmp_path / "app.log", tmp_path / "out.log"
    topic = f"rotate-{uuid.uuid4().hex[:8]}"
    source.touch()
    api = inproc_hub().start()
    start_pipeline(api, source, sink, topic)
    written: list[str] = []
    for rotation in range(4):
        batch = [f"r{rotation}-{i}" for i in range(500)]
        append(source, batch)
        written += batch
        wait_for_lines(sink, len(written) - 100)  # the tail may still be in flight
        os.rename(source, tmp_path / f"app.log.{rotation}")
        append(tmp_path / f"app.log.{rotation}", [f"late-{rotation}"])  # old fd still written
        written.append(f"late-{rotation}")
        source.touch()
    assert wait_for_lines(sink, len(written)) == written
