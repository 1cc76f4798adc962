"""Helpers of the HTTP connector tests: a real API server fixture, in-test task contexts.

Not a conftest: this directory is named like the stdlib `http` package, so test modules
import the fixtures from here (`from tests.connectors.http.support import api_fixture`).

Unit tests drive ``HttpPollTask``/``PrometheusScrapeTask``/``WebhookSourceTask`` directly with a
small in-test ``SourceTaskContext`` (``Context``) whose offset store holds what the worker would
have committed; ``Clock`` replaces ``time.monotonic`` and the task's ``wait`` advances it, so
backoffs, Retry-After waits and schedules run without sleeping.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pytest

from hub.api import SourceRecord
from tests.connectors.http.api_server import ApiServer


@pytest.fixture(name="api")
def api_fixture() -> Iterator[ApiServer]:
    server = ApiServer()
    yield server
    server.close()


class Context:
    """A SourceTaskContext whose offsets are what ``ack`` says the broker acknowledged."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._config = config
        self.committed: dict[tuple[tuple[str, Any], ...], Mapping[str, Any]] = {}

    def ack(self, records: Iterable[SourceRecord]) -> None:
        for r in records:
            if r.source_partition:
                self.committed[tuple(sorted(r.source_partition.items()))] = dict(r.source_offset)

    @property
    def offset_reader(self) -> Context:
        return self

    @property
    def config(self) -> Mapping[str, Any]:
        return self._config

    def offset(self, partition: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self.committed.get(tuple(sorted(partition.items())))

    def offsets(self, partitions: Iterable[Mapping[str, Any]]) -> dict[Any, Mapping[str, Any]]:
        keys = (tuple(sorted(p.items())) for p in partitions)
        return {k: self.committed[k] for k in keys if k in self.committed}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.waited: list[float] = []

    def __call__(self) -> float:
        return self.now

    def wait(self, seconds: float) -> None:
        self.waited.append(seconds)
        self.now += seconds


def read_topic(bootstrap: str, topic: str, timeout: float = 20.0) -> list[Any]:
    """Every message of ``topic`` up to its current end (each partition to its watermark)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex}",
         "enable.auto.commit": False, "auto.offset.reset": "earliest"}
    )  # fmt: skip
    try:
        meta = consumer.list_topics(topic, timeout=timeout).topics[topic]
        ends = {}
        for p in meta.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
            if high > low:
                ends[p] = high
        if not ends:
            return []
        consumer.assign([TopicPartition(topic, p, 0) for p in ends])
        out: list[Any] = []
        done: set[int] = set()
        deadline = time.monotonic() + timeout
        while len(done) < len(ends):
            assert time.monotonic() < deadline, f"could not read {topic} to its end"
            for msg in consumer.consume(1000, 0.2):
                if msg.error() is None:
                    out.append(msg)
                    if msg.offset() + 1 >= ends[msg.partition()]:
                        done.add(msg.partition())
        return out
    finally:
        consumer.close()
