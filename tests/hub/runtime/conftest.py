"""Fixtures for runtime tests: in-process herders over the session broker, and topic readers.

Each test gets its own internal topics (configs/offsets/status) so tests never see each
other's connectors; ``herder_factory`` can start several herders over the same topics one
after another, which is how restart tests model a worker restart.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Message, TopicPartition

from broker.config import BrokerConfig
from hub.runtime.config import WorkerConfig
from hub.runtime.herder import Herder
from sluice.embedded_broker import EmbeddedBroker
from tests.hub.runtime.sample_plugins import sample_registry


def worker_settings(bootstrap: str, prefix: str, **overrides: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "config.storage.topic": f"{prefix}-configs",
        "offset.storage.topic": f"{prefix}-offsets",
        "status.storage.topic": f"{prefix}-status",
        "offset.flush.interval.ms": 100,
        "task.restart.backoff.ms": 100,
        "task.restart.max.backoff.ms": 1000,
        "key.converter.schemas.enable": "false",
        "value.converter.schemas.enable": "false",
        **overrides,
    }


@pytest.fixture(scope="session")
def hub_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """An in-process broker without the 3 s initial group rebalance delay (as ``sluice up``)."""
    config = BrokerConfig(
        data_dir=tmp_path_factory.mktemp("hub-broker") / "data",
        port=0,
        group_initial_rebalance_delay_ms=0,
    )
    broker = EmbeddedBroker(config)
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def herder_factory(hub_broker: EmbeddedBroker) -> Iterator[Callable[..., Herder]]:
    prefix = f"connect-{uuid.uuid4().hex[:8]}"
    running: list[Herder] = []

    def make(**overrides: Any) -> Herder:
        config = WorkerConfig.from_mapping(
            worker_settings(hub_broker.bootstrap, prefix, **overrides)
        )
        herder = Herder(config, registry=sample_registry())
        herder.start()
        running.append(herder)
        return herder

    yield make
    for herder in running:
        herder.stop()


@pytest.fixture
def name(topic_name: str) -> str:
    """A connector name unique to the test (sample plugins keep state per name)."""
    return topic_name


def read_topic(bootstrap: str, topic: str, timeout: float = 10.0) -> list[Message]:
    """Every record in ``topic`` right now (reads each partition to its high watermark)."""
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
        out: list[Message] = []
        done: set[int] = set()
        deadline = time.monotonic() + timeout
        while len(done) < len(ends):
            if time.monotonic() > deadline:
                raise AssertionError(f"could not read {topic} to its end")
            for msg in consumer.consume(1000, 0.2):
                if msg.error() is not None:
                    continue
                out.append(msg)
                if msg.offset() + 1 >= ends[msg.partition()]:
                    done.add(msg.partition())
        return out
    finally:
        consumer.close()
