"""Targets for the warehouse tests: PostgreSQL (the shared fixture), DuckDB and SQLite files.

Tests that use ``Context`` drive WarehouseSinkTask directly (start/put/pre_commit/stop, as the
worker would): they are unit tests of connector logic against real databases, not of the
runtime. ``test_warehouse_e2e.py`` goes through ``sluice up`` and its REST API instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from connectors.warehouse.sink_task import WarehouseSinkTask
from hub.api import Schema, SinkRecord, TopicPartition


class Reporter:
    """Kafka Connect's ErrantRecordReporter shape: ``report(record, error)``."""

    def __init__(self) -> None:
        self.reported: list[tuple[SinkRecord, Exception]] = []

    def report(self, record: SinkRecord, error: Exception) -> None:
        self.reported.append((record, error))


class Context:
    """A minimal SinkTaskContext; with ``tolerate`` it offers an errant-record reporter."""

    def __init__(self, config: Mapping[str, Any] | None = None, tolerate: bool = False) -> None:
        self._config = dict(config or {})
        self.reporter = Reporter() if tolerate else None
        self.rewinds: dict[TopicPartition, int] = {}

    @property
    def config(self) -> Mapping[str, Any]:
        return self._config

    def assignment(self) -> set[TopicPartition]:
        return set()

    def pause(self, *partitions: TopicPartition) -> None: ...

    def resume(self, *partitions: TopicPartition) -> None: ...

    def offset(self, partition: TopicPartition, offset: int) -> None:
        self.rewinds[partition] = offset

    def request_commit(self) -> None: ...

    def errant_record_reporter(self) -> Reporter | None:
        return self.reporter


def rec(offset: int, value: Any, key: Any = None, *, topic: str = "orders",
        schema: Schema | None = None, key_schema: Schema | None = None,
        partition: int = 0) -> SinkRecord:  # fmt: skip
    return SinkRecord(topic=topic, partition=partition, offset=offset, key=key, value=value,
                      key_schema=key_schema, value_schema=schema)  # fmt: skip


@dataclass
class Target:
    """One database the sink writes; ``url`` is the JDBC URL a user would configure."""

    kind: str
    url: str
    tasks: list[WarehouseSinkTask] = field(default_factory=list)

    def task(self, tolerate: bool = False, **config: Any) -> WarehouseSinkTask:
        raw = {"name": "wh", "topics": "orders", "connection.url": self.url, **config}
        task = WarehouseSinkTask(Context(raw, tolerate))  # type: ignore[arg-type]
        task.start(raw)
        self.tasks.append(task)
        return task

    def rows(self, task: WarehouseSinkTask, sql: str) -> list[tuple[Any, ...]]:
        """Query results after committing the task's pending rows (as pre_commit would)."""
        task.flush({})
        assert task.engine is not None
        with task.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(sql))]
