"""A small in-test SinkTaskContext and record helpers.

Tests that use it drive sink tasks directly (put/pre_commit/open/close as the worker would):
they are unit tests of connector logic, not of the runtime; the end-to-end tests in
tests/connectors/s3/test_s3_e2e.py go through ``sluice up`` instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.api import Schema, SinkRecord, TopicPartition


class Context:
    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self._config = dict(config or {})
        self.assigned: set[TopicPartition] = set()
        self.paused: set[TopicPartition] = set()
        self.rewinds: dict[TopicPartition, int] = {}
        self.commit_requests = 0

    @property
    def config(self) -> Mapping[str, Any]:
        return self._config

    def assignment(self) -> set[TopicPartition]:
        return set(self.assigned)

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused.difference_update(partitions)

    def offset(self, partition: TopicPartition, offset: int) -> None:
        self.rewinds[partition] = offset

    def request_commit(self) -> None:
        self.commit_requests += 1


class Clock:
    """Injected wall clock (ms)."""

    def __init__(self, now: int = 1_700_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def rec(
    offset: int,
    value: Any,
    *,
    topic: str = "t",
    partition: int = 0,
    timestamp: int | None = None,
    schema: Schema | None = None,
) -> SinkRecord:
    return SinkRecord(
        topic=topic, partition=partition, offset=offset, value=value, value_schema=schema,
        timestamp=timestamp if timestamp is not None else 1_700_000_000_000 + offset,
    )  # fmt: skip
