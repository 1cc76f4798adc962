"""Config, offset and status stores: in-memory and topic-backed, surviving a restart."""

from __future__ import annotations

import uuid

import pytest

from hub.runtime.storage import (
    KafkaConfigStore,
    KafkaOffsetStore,
    KafkaStatusStore,
    MemoryConfigStore,
    MemoryOffsetStore,
    MemoryStatusStore,
)
from tests.fixtures.broker import BrokerProcess, wait_until


def _client(broker: BrokerProcess) -> dict[str, str]:
    return {"bootstrap.servers": broker.bootstrap}


def _exercise_configs(store: MemoryConfigStore | KafkaConfigStore) -> None:
    store.put_connector_config("a", {"connector.class": "counter", "topic": "t"})
    store.put_connector_config("b", {"connector.class": "counter"})
    store.put_target_state("a", "PAUSED")
    store.put_task_configs("a", [{"x": 1}, {"x": 2}])
    store.remove_connector_config("b")


def _check_configs(store: MemoryConfigStore | KafkaConfigStore) -> None:
    assert store.connectors() == ["a"]
    assert store.connector_config("a") == {"connector.class": "counter", "topic": "t"}
    assert store.target_state("a") == "PAUSED"
    assert store.task_configs("a") == [{"x": 1}, {"x": 2}]
    assert store.connector_config("b") is None


def test_memory_config_store() -> None:
    store = MemoryConfigStore()
    _exercise_configs(store)
    _check_configs(store)


def test_kafka_config_store_survives_restart(broker: BrokerProcess) -> None:
    topic = f"configs-{uuid.uuid4().hex[:8]}"
    store = KafkaConfigStore(topic, _client(broker))
    store.start()
    _exercise_configs(store)
    _check_configs(store)
    store.stop()
    again = KafkaConfigStore(topic, _client(broker))
    again.start()
    try:
        _check_configs(again)
    finally:
        again.stop()


def test_uncommitted_task_configs_are_ignored() -> None:
    store = MemoryConfigStore()
    store.put_connector_config("a", {})
    store.put_task_configs("a", [{"x": 1}])
    store._write([("task-a-0", {"properties": {"x": 9}})])  # crash before the commit record
    assert store.task_configs("a") == [{"x": 1}]


@pytest.mark.parametrize("kind", ["memory", "kafka"])
def test_offset_store_round_trip(broker: BrokerProcess, kind: str) -> None:
    topic = f"offsets-{uuid.uuid4().hex[:8]}"
    store = MemoryOffsetStore() if kind == "memory" else KafkaOffsetStore(topic, _client(broker))
    store.start()
    store.put("c1", [({"file": "a", "n": 1}, {"pos": 10}), ({"file": "b"}, {"pos": 5})])
    store.put("c1", [({"n": 1, "file": "a"}, {"pos": 20})])  # same partition, other key order
    store.put("c2", [({"file": "a", "n": 1}, {"pos": 99})])
    store.put("c1", [({"file": "b"}, None)])
    assert store.get("c1", {"file": "a", "n": 1}) == {"pos": 20}
    assert store.get("c1", {"file": "b"}) is None
    assert store.connector_offsets("c1") == [({"file": "a", "n": 1}, {"pos": 20})]
    assert store.get("c2", {"file": "a", "n": 1}) == {"pos": 99}
    store.stop()
    if kind == "kafka":
        again = KafkaOffsetStore(topic, _client(broker), partitions=5)
        again.start()
        try:
            assert again.connector_offsets("c1") == [({"file": "a", "n": 1}, {"pos": 20})]
            assert again.get("c2", {"n": 1, "file": "a"}) == {"pos": 99}
        finally:
            again.stop()


def test_memory_status_store() -> None:
    store = MemoryStatusStore()
    store.put_connector("a", "RUNNING", "w:1")
    store.put_task("a", 0, "FAILED", "w:1", "Traceback...")
    store.put_task("a", 1, "RUNNING", "w:1")
    store.put_topic("a", "t1", 0)
    assert store.connector("a")["state"] == "RUNNING"
    assert store.tasks("a")[0]["trace"] == "Traceback..."
    assert store.topics("a") == ["t1"]
    store.remove_connector("a")
    assert store.connector("a") is None and store.tasks("a") == {}


def test_kafka_status_store_survives_restart(broker: BrokerProcess) -> None:
    topic = f"status-{uuid.uuid4().hex[:8]}"
    store = KafkaStatusStore(topic, _client(broker))
    store.start()
    store.put_connector("a", "RUNNING", "w:1")
    store.put_task("a", 0, "FAILED", "w:1", "trace")
    store.put_topic("a", "orders", 0)
    store.put_connector("gone", "RUNNING", "w:1")
    store.remove_connector("gone")
    store.stop()
    again = KafkaStatusStore(topic, _client(broker))
    again.start()
    try:
        wait_until(lambda: again.connector("a") is not None, 5, "status to load")
        assert again.connector("a")["state"] == "RUNNING"
        assert again.task("a", 0)["trace"] == "trace"
        assert again.topics("a") == ["orders"]
        assert again.connector("gone") is None
        # the new session's own writes win over what it read
        again.put_connector("a", "PAUSED", "w:2")
        assert again.connector("a")["state"] == "PAUSED"
    finally:
        again.stop()
