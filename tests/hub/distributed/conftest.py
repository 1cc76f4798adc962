"""Three ``sluice connect`` workers of one group against a private broker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.broker import BrokerProcess, wait_until
from tests.fixtures.workers import WorkerProcess, group_settings


class Group:
    """The workers, and the group's view as their REST APIs report it."""

    def __init__(self, broker: Any, tmp_path: Path) -> None:
        """``broker``: anything with ``bootstrap`` (a broker, or a ``Cluster`` of them)."""
        self.broker = broker
        self.tmp_path = tmp_path
        self.workers: list[WorkerProcess] = []

    def add(self, **settings: Any) -> WorkerProcess:
        worker = WorkerProcess(
            self.tmp_path / f"worker{len(self.workers)}",
            self.broker.bootstrap,
            group_settings(self.tmp_path, **settings),
        )
        worker.start()
        self.workers.append(worker)
        return worker

    def running(self) -> list[WorkerProcess]:
        return [w for w in self.workers if w.running]

    def view(self, via: WorkerProcess | None = None) -> dict[str, Any]:
        status, body = (via or self.running()[0]).request("GET", "/workers")
        return body if status == 200 else {}

    def stable(self, members: int) -> dict[str, Any] | None:
        """The group's view once every running worker agrees on ``members`` members."""
        views = [self.view(w) for w in self.running()]
        settled = all(v and not v["rebalancing"] and len(v["members"]) == members for v in views)
        if settled and all(v["members"] == views[0]["members"] for v in views):
            return views[0]
        return None

    def wait_stable(self, members: int, timeout: float = 60.0) -> dict[str, Any]:
        view: Any = wait_until(
            lambda: self.stable(members), timeout, f"a stable group of {members}"
        )
        return dict(view)

    def leader(self) -> WorkerProcess:
        """The leader of the settled group (a rebalance may be changing it right now)."""
        url = self.wait_stable(len(self.running()))["leader_url"]
        return next(w for w in self.running() if w.url == url)

    def non_leader(self) -> WorkerProcess:
        url = self.wait_stable(len(self.running()))["leader_url"]
        return next(w for w in self.running() if w.url != url)

    def owner(self, unit: str, timeout: float = 60.0) -> WorkerProcess:
        """The worker the group's settled assignment gives ``unit`` (``name``/``name-task``)."""

        def find() -> WorkerProcess | None:
            view = self.stable(len(self.running()))
            urls = [url for url, units in (view or {}).get("members", {}).items() if unit in units]
            return next((w for w in self.workers if urls and w.url == urls[0]), None)

        found: Any = wait_until(find, timeout, f"the owner of {unit}")
        return found


@pytest.fixture
def group_of(fresh_broker: BrokerProcess, tmp_path: Path) -> Iterator[Callable[..., Group]]:
    groups: list[Group] = []

    def make(count: int = 3, **settings: Any) -> Group:
        group = Group(fresh_broker, tmp_path)
        groups.append(group)
        for _ in range(count):
            group.add(**settings)
        group.wait_stable(count)
        return group

    yield make
    for group in groups:
        for worker in group.workers:
            if worker.running:
                worker.thaw()
                worker.stop()
