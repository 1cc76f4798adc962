"""The hub's background work fails alone: store readers, status writes, offset commits and
connector start-up are retried with backoff, logged with their names, reported, and never stop
anything else."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from hub.runtime.config import WorkerConfig
from hub.runtime.errors import KafkaLogError
from hub.runtime.herder import Herder
from hub.runtime.storage import MemoryConfigStore, MemoryOffsetStore, MemoryStatusStore
from hub.runtime.storage.kafka_log import KafkaBasedLog
from hub.runtime.storage.status_store import KafkaStatusStore
from sluice.embedded_broker import EmbeddedBroker
from tests.fixtures.broker import BrokerProcess, wait_until
from tests.hub.runtime.conftest import read_topic, worker_settings
from tests.hub.runtime.sample_plugins import STATE, sample_registry


def test_a_store_reader_survives_a_broker_outage(
    fresh_broker: BrokerProcess, caplog: pytest.LogCaptureFixture
) -> None:
    topic = f"store-{uuid.uuid4().hex[:8]}"
    seen: list[bytes | None] = []
    store = KafkaBasedLog(
        topic,
        {"bootstrap.servers": fresh_broker.bootstrap},
        lambda _key, value: seen.append(value),
        timeout=3.0,
    )
    store.start()
    try:
        store.send([(b"k", b"before")])
        store.read_to_end()
        fresh_broker.stop()
        with caplog.at_level(logging.INFO, logger="hub.runtime.storage.kafka_log"):
            with pytest.raises(KafkaLogError, match=f"reading {topic} to its end timed out"):
                store.read_to_end()
            wait_until(lambda: store.failure is not None, 10, "the reader to report its failure")
            assert store._thread is not None and store._thread.is_alive()
            errors = [r for r in caplog.records if r.levelno == logging.ERROR]
            assert len(errors) == 1 and errors[0].topic == topic  # type: ignore[attr-defined]

            fresh_broker.restart()
            wait_until(lambda: store.failure is None, 30, "the reader to recover")
        store.send([(b"k", b"after")])
        store.read_to_end()
        assert seen[-1] == b"after"
        assert any("recovered" in r.getMessage() for r in caplog.records)
    finally:
        store.stop()


def test_status_writes_never_raise_and_are_written_once_the_broker_is_back(
    fresh_broker: BrokerProcess,
) -> None:
    topic = f"status-{uuid.uuid4().hex[:8]}"
    # One queued message at most: while the broker is away the producer refuses the second.
    client = {"bootstrap.servers": fresh_broker.bootstrap, "queue.buffering.max.messages": 1}
    store = KafkaStatusStore(topic, client)
    store.start()
    try:
        fresh_broker.stop()
        for state in ("RUNNING", "PAUSED", "RUNNING", "FAILED"):
            store.put_task("conn", 0, state, "w")  # must not raise into the caller
            store.put_connector("conn", state, "w")
        assert store.task("conn", 0)["state"] == "FAILED"  # type: ignore[index]
        assert store.health.failure is not None
        assert "BufferError" in store.health.failure.error

        fresh_broker.restart()

        def delivered() -> bool:
            store.put_connector("conn", "RUNNING", "w")  # the next change retries the rest
            return store.health.failure is None

        wait_until(delivered, 30, "the unsent statuses to be written")
        store._producer.flush(10)
        latest = {m.key(): json.loads(m.value()) for m in read_topic(fresh_broker.bootstrap, topic)}
        assert latest[b"status-task-conn-0"]["state"] == "FAILED"
        assert latest[b"status-connector-conn"]["state"] == "RUNNING"
    finally:
        store.stop()


class FlakyOffsetStore(MemoryOffsetStore):
    """The offsets topic's writes failing at will (a stand-in: the real store fails only when
    the broker is away, which would stop the source task's producing too)."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = threading.Event()

    def _write(self, records: list[tuple[str, str | None]]) -> None:
        if self.failing.is_set():
            raise KafkaLogError("writes to the offsets topic not acknowledged in time")
        super()._write(records)


def _herder(broker: EmbeddedBroker, **stores: Any) -> Herder:
    prefix = f"bg-{uuid.uuid4().hex[:8]}"
    config = WorkerConfig.from_mapping(worker_settings(broker.bootstrap, prefix))
    return Herder(
        config,
        registry=sample_registry(),
        config_store=stores.get("config_store", MemoryConfigStore()),
        offset_store=stores.get("offset_store", MemoryOffsetStore()),
        status_store=stores.get("status_store", MemoryStatusStore()),
    )


def test_failing_offset_commits_show_in_the_task_status_and_recover(
    hub_broker: EmbeddedBroker, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    offsets = FlakyOffsetStore()
    offsets.failing.set()
    herder = _herder(hub_broker, offset_store=offsets)
    herder.start()
    try:
        config = {"connector.class": "counter", "topic": name, "count": "20", "batch": "5"}
        with caplog.at_level(logging.WARNING, logger="hub.runtime.worker_source_task"):
            herder.create_connector(name, config)

            def warned() -> list[str]:
                [task] = herder.connector_status(name)["tasks"]
                return task.get("warnings", []) if task["state"] == "RUNNING" else []

            [warning] = wait_until(warned, 10, "the task to report its failing commits")
            assert warning.startswith("offset commit failing")
            assert "KafkaLogError" in warning
            wait_until(lambda: offsets.connector_offsets(name) == [], 1, "nothing committed")
        first = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(first) == 1 and first[0].connector == name  # type: ignore[attr-defined]

        offsets.failing.clear()
        done = [({"p": 0}, {"n": 20})]
        wait_until(lambda: offsets.connector_offsets(name) == done, 10, "the offsets committed")
        wait_until(
            lambda: "warnings" not in herder.connector_status(name)["tasks"][0], 10, "recovered"
        )
        assert herder.connector_status(name)["tasks"][0]["state"] == "RUNNING"
    finally:
        herder.stop()


class OneBadConnectorConfigs(MemoryConfigStore):
    """Task configs of one connector cannot be written (a stand-in for a config topic that
    refuses one record, e.g. one too large for the broker)."""

    def __init__(self, bad: str) -> None:
        super().__init__()
        self.bad = bad

    def put_task_configs(self, name: str, configs: list[dict[str, Any]]) -> None:
        if name == self.bad:
            raise KafkaLogError("the broker refused a record for the configs topic as too large")
        super().put_task_configs(name, configs)


def test_one_connector_failing_at_start_leaves_the_others_running(
    hub_broker: EmbeddedBroker, name: str
) -> None:
    good, bad = f"{name}-good", f"{name}-bad"
    configs = OneBadConnectorConfigs(bad)
    for connector in (bad, good):
        configs.put_connector_config(
            connector, {"connector.class": "counter", "topic": connector, "name": connector}
        )
    herder = _herder(hub_broker, config_store=configs)
    herder.start()  # must not raise
    try:
        status = herder.connector_status(bad)
        assert status["connector"]["state"] == "FAILED"
        assert "refused a record" in status["connector"]["trace"]
        wait_until(lambda: STATE.starts[good] >= 1, 10, "the good connector's task")
        assert herder.connector_status(good)["connector"]["state"] == "RUNNING"
        assert herder.health()["status"] == "healthy"
    finally:
        herder.stop()


def test_health_reports_starting_healthy_and_stopping(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder]
) -> None:
    unstarted = _herder(hub_broker)
    assert unstarted.health() == {"status": "starting", "message": "Worker is still starting up."}
    herder = herder_factory()
    assert herder.health() == {
        "status": "healthy",
        "message": "Worker has completed startup and is ready to handle requests.",
    }
    herder.configs.log.health.failed(KafkaLogError("broker away"))  # type: ignore[attr-defined]
    unhealthy = herder.health()
    assert unhealthy["status"] == "unhealthy"
    assert unhealthy["message"].endswith(f"Failing: reading {herder.config.config_storage_topic}.")
    assert "broker away" not in unhealthy["message"]  # no error text for unauthenticated probes
    herder.configs.log.health.succeeded()  # type: ignore[attr-defined]
    herder.stop()
    assert herder.health()["status"] == "unhealthy"
