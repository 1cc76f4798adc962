"""Drives ``PostgresCdcSourceTask`` directly, without the worker, against the real throwaway
PostgreSQL of ``tests/fixtures/postgres.py``.

``TaskHarness`` plays the worker's part: an in-test ``SourceTaskContext`` whose offset reader
returns what was "committed", ``poll`` in a loop, and an ``ack`` step that does what the worker
does once the broker acknowledged records (``commit_records`` per batch, store the offsets,
then ``commit()``). Waits are conditions with deadlines, never sleeps.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import pytest

pytest.importorskip("psycopg")

from connectors.postgres_cdc.source_task import PostgresCdcSourceTask
from hub.api import RetriableError, SourceRecord
from tests.fixtures.postgres import PostgresServer


class OffsetStore:
    """What the worker would have committed: the offset of the last acknowledged record."""

    def __init__(self) -> None:
        self.committed: dict[tuple[tuple[str, Any], ...], Mapping[str, Any]] = {}

    def put(self, record: SourceRecord) -> None:
        self.committed[tuple(sorted(record.source_partition.items()))] = dict(record.source_offset)

    def offset(self, partition: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self.committed.get(tuple(sorted(partition.items())))

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> dict[tuple[tuple[str, Any], ...], Mapping[str, Any]]:
        keys = (tuple(sorted(p.items())) for p in partitions)
        return {k: self.committed[k] for k in keys if k in self.committed}


class Context:
    def __init__(self, store: OffsetStore, config: Mapping[str, Any]) -> None:
        self._store, self._config = store, config

    @property
    def offset_reader(self) -> OffsetStore:
        return self._store

    @property
    def config(self) -> Mapping[str, Any]:
        return self._config


class TaskHarness:
    """One task plus its offset store; ``records`` holds everything polled so far."""

    def __init__(self, config: dict[str, Any], store: OffsetStore | None = None) -> None:
        self.config = config
        self.store = store or OffsetStore()
        self.records: list[SourceRecord] = []
        self.acked = 0
        self.task = PostgresCdcSourceTask(Context(self.store, config))

    def start(self) -> TaskHarness:
        self.task.start(self.config)
        return self

    def poll_once(self) -> list[SourceRecord]:
        try:
            got = self.task.poll() or []
        except RetriableError:
            got = []
        self.records.extend(got)
        return got

    def poll_until(self, predicate: Callable[[list[SourceRecord]], bool], timeout: float = 20,
                   what: str = "records") -> list[SourceRecord]:  # fmt: skip
        deadline = time.monotonic() + timeout
        while not predicate(self.records):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; got {len(self.records)}")
            self.poll_once()
        return self.records

    def changes(self, topic_suffix: str | None = None) -> list[SourceRecord]:
        """Non-tombstone, non-heartbeat records (optionally of one table's topic)."""
        return [
            r for r in self.records
            if r.value is not None and "op" in r.value
            and (topic_suffix is None or r.topic.endswith(topic_suffix))
        ]  # fmt: skip

    def wait_changes(self, n: int, topic_suffix: str | None = None, timeout: float = 20) -> list:
        self.poll_until(lambda _: len(self.changes(topic_suffix)) >= n, timeout, f"{n} changes")
        return self.changes(topic_suffix)

    def ack(self, upto: int | None = None) -> None:
        """As the worker does after the broker acknowledged records: ``commit_records`` with
        them, store the last offset, then call ``commit()``."""
        end = len(self.records) if upto is None else upto
        acked = self.records[self.acked : end]
        self.task.commit_records(acked)
        if acked:
            self.store.put(acked[-1])
        self.acked = max(self.acked, end)
        self.task.commit()

    def stop(self) -> None:
        self.task.stop()


@pytest.fixture
def cdc_config(postgres: PostgresServer, pg_database: str) -> dict[str, Any]:
    """A Debezium-style config for a fresh database, with its own slot and prefix."""
    tag = uuid.uuid4().hex[:8]
    return postgres.connector_config(
        pg_database,
        **{
            "name": f"cdc-{tag}",
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "topic.prefix": f"srv{tag}",
            "slot.name": f"slot_{tag}",
            "publication.name": f"pub_{tag}",
            "plugin.name": "pgoutput",
            "poll.interval.ms": "100",
        },
    )


@pytest.fixture
def harness(
    cdc_config: dict[str, Any], postgres: PostgresServer, pg_database: str
) -> Iterator[Callable[..., TaskHarness]]:
    """Builds started harnesses; stops them all, then drops the test database's replication
    slots (slots are cluster-wide and the server has only ``max_replication_slots``)."""
    made: list[TaskHarness] = []

    def make(store: OffsetStore | None = None, start: bool = True, **overrides: str) -> TaskHarness:
        h = TaskHarness({**cdc_config, **overrides}, store)
        made.append(h)
        return h.start() if start else h

    yield make
    for h in made:
        h.stop()
    drop_slots(postgres, pg_database)


def drop_slots(postgres: PostgresServer, dbname: str, timeout: float = 15) -> None:
    """Drops every slot of ``dbname``, waiting (with a deadline) for walsenders of stopped
    tasks to release theirs."""
    import psycopg

    deadline = time.monotonic() + timeout
    with psycopg.connect(postgres.dsn(dbname), autocommit=True) as conn:
        while True:
            rows = conn.execute(
                "SELECT slot_name, active FROM pg_replication_slots "
                "WHERE database = current_database()"
            ).fetchall()
            for name, active in rows:
                if not active:
                    conn.execute("SELECT pg_drop_replication_slot(%s)", (name,))
            if not any(active for _, active in rows) or time.monotonic() > deadline:
                return
            time.sleep(0.1)  # polling the server's view of its walsenders; nothing to wait on


@pytest.fixture
def sql(postgres: PostgresServer, pg_database: str) -> Callable[..., None]:
    """Runs statements in the test database (autocommit: each statement commits)."""

    def run(*statements: str) -> None:
        import psycopg

        with psycopg.connect(postgres.dsn(pg_database), autocommit=True) as conn:
            for stmt in statements:
                conn.execute(stmt)  # type: ignore[arg-type]

    return run
