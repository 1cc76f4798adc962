"""A worker killed with SIGKILL loses nothing: sources re-send from the last committed offset.

The worker runs in a subprocess (``worker_main.py``) against the in-process test broker, so
only the worker dies; duplicates after a kill are allowed (at-least-once), losses are not.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

from sluice.embedded_broker import EmbeddedBroker
from tests.fixtures.broker import wait_until
from tests.hub.runtime.conftest import read_topic, worker_settings

_REPO = Path(__file__).resolve().parents[3]


class WorkerProcess:
    def __init__(self, tmp: Path, settings: dict, connectors: dict) -> None:
        self.settings, self.connectors = tmp / "worker.json", tmp / "connectors.json"
        self.settings.write_text(json.dumps(settings))
        self.connectors.write_text(json.dumps(connectors))
        self.log_path = tmp / "worker.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.hub.runtime.worker_main",
                 str(self.settings), str(self.connectors)],
                stdout=log, stderr=subprocess.STDOUT, cwd=_REPO, env=dict(os.environ),
            )  # fmt: skip

        def ready() -> bool:
            assert self.proc is not None and self.proc.poll() is None, self.log_path.read_text()
            return "worker ready" in self.log_path.read_text()[offset:]

        wait_until(ready, 30, "worker ready")

    def end(self, sig: int) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(30)


def _values(broker: EmbeddedBroker, topic: str) -> list[int]:
    return [json.loads(m.value())["n"] for m in read_topic(broker.bootstrap, topic)]


def test_source_survives_kill_9_without_loss(
    hub_broker: EmbeddedBroker, tmp_path: Path, topic_name: str
) -> None:
    n = 10_000
    settings = worker_settings(hub_broker.bootstrap, f"crash-{topic_name}",
                               **{"offset.flush.interval.ms": 50})  # fmt: skip
    connectors = {
        topic_name: {"connector.class": "counter", "topic": topic_name, "count": str(n),
                     "batch": "50", "poll_delay_ms": "2"}
    }  # fmt: skip
    worker = WorkerProcess(tmp_path, settings, connectors)
    worker.start()
    wait_until(lambda: len(_values(hub_broker, topic_name)) > 2000, 30, "records before kill")
    assert worker.end(9) == -9
    before = len(_values(hub_broker, topic_name))
    assert before < n, "the source finished before the kill; nothing was tested"

    worker.start()
    wait_until(lambda: set(_values(hub_broker, topic_name)) >= set(range(1, n + 1)), 60, "all")
    assert worker.end(15) == 0
    got = _values(hub_broker, topic_name)
    assert set(got) == set(range(1, n + 1)), "records lost"
    duplicates = sum(c - 1 for c in collections.Counter(got).values())
    # at-least-once: only what followed the last commit before the kill may repeat
    assert duplicates <= before, duplicates
