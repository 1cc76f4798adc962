"""In-test stand-ins for the runtime's task contexts, so the file connectors' logic is unit
tested by calling ``poll``/``put``/``flush`` directly (the worker is not involved).

Time is injected: ``Clock`` replaces ``time.monotonic`` and ``wait`` never sleeps, so
timeouts (multiline flush, glob rescans, missing-file grace) are driven deterministically.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from connectors.file.source_task import FileSourceTask
from hub.api import SourceRecord, TopicPartition


class OffsetStore:
    """What the worker would have committed: the offset of the last acknowledged record."""

    def __init__(self) -> None:
        self.committed: dict[tuple[tuple[str, Any], ...], Mapping[str, Any]] = {}

    def ack(self, records: Iterable[SourceRecord]) -> None:
        for r in records:
            self.committed[tuple(sorted(r.source_partition.items()))] = dict(r.source_offset)

    def offset(self, partition: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self.committed.get(tuple(sorted(partition.items())))

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> dict[tuple[tuple[str, Any], ...], Mapping[str, Any]]:
        keys = (tuple(sorted(p.items())) for p in partitions)
        return {k: self.committed[k] for k in keys if k in self.committed}


class SourceContext:
    def __init__(self, store: OffsetStore, config: Mapping[str, Any]) -> None:
        self._store = store
        self._config = config

    @property
    def offset_reader(self) -> OffsetStore:
        return self._store

    @property
    def config(self) -> Mapping[str, Any]:
        return self._config


class SinkContext:
    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self._config = config or {}
        self.rewinds: dict[TopicPartition, int] = {}
        self.commit_requests = 0

    @property
    def config(self) -> Mapping[str, Any]:
        return self._config

    def assignment(self) -> set[TopicPartition]:
        return set(self.rewinds)

    def pause(self, *partitions: TopicPartition) -> None:
        pass

    def resume(self, *partitions: TopicPartition) -> None:
        pass

    def offset(self, partition: TopicPartition, offset: int) -> None:
        self.rewinds[partition] = offset

    def request_commit(self) -> None:
        self.commit_requests += 1


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Source:
    """A FileSourceTask under test with its offset store and clock."""

    def __init__(self, store: OffsetStore, clock: Clock, config: dict[str, Any]) -> None:
        self.store, self.clock, self.config = store, clock, config
        self.task = FileSourceTask(SourceContext(store, config), clock=clock, wait=lambda s: None)
        self.task.start(config)

    def poll(self, ack: bool = True) -> list[SourceRecord]:
        """One poll; its records are acknowledged (offsets committed) unless ``ack=False``."""
        records = self.task.poll() or []
        if ack:
            self.store.ack(records)
        return records

    def drain(self, ack: bool = True, max_polls: int = 1000) -> list[SourceRecord]:
        """Polls until a poll returns nothing."""
        out: list[SourceRecord] = []
        for _ in range(max_polls):
            records = self.poll(ack)
            if not records:
                return out
            out.extend(records)
        raise AssertionError("source never went idle")

    def values(self, ack: bool = True) -> list[str]:
        return [r.value for r in self.drain(ack)]

    def restart(self, **overrides: Any) -> Source:
        """A new task instance (as after a crash) resuming from the committed offsets."""
        self.task.stop()
        return Source(self.store, self.clock, {**self.config, **overrides})


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def source(tmp_path: Path, clock: Clock):
    """Factory: ``source(file=..., **more_config)`` -> a started Source."""
    started: list[Source] = []

    def make(**config: Any) -> Source:
        cfg = {
            "name": "test-source",
            "topic": "logs",
            "glob.rescan.interval.ms": "0",
            "poll.interval.ms": "0",
        }
        cfg.update({k.replace("_", "."): v for k, v in config.items()})
        s = Source(OffsetStore(), clock, cfg)
        started.append(s)
        return s

    yield make
    for s in started:
        s.task.stop()
