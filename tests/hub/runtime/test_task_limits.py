"""How many tasks a connector gets: ``tasks.max`` within ``tasks.max.limit``, and KIP-1004's
``tasks.max.enforce``; task configs reach REST clients as strings."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from hub.api import ConfigError
from hub.rest import create_app
from hub.runtime.config import DEFAULT_TASKS_MAX_LIMIT
from hub.runtime.herder import Herder
from tests.fixtures.broker import wait_until
from tests.fixtures.rest_auth import authed, secured


def _running_tasks(herder: Herder, name: str) -> list[int]:
    return [t["id"] for t in herder.connector_status(name)["tasks"] if t["state"] == "RUNNING"]


def test_tasks_max_beyond_the_worker_limit_is_rejected_at_validation(
    herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory()
    threads = threading.active_count()
    with pytest.raises(ConfigError) as refused:
        herder.create_connector(name, {"connector.class": "fanout", "tasks.max": "2000"})
    reason = (
        f"tasks.max=2000 exceeds this worker's tasks.max.limit={DEFAULT_TASKS_MAX_LIMIT}: lower "
        "tasks.max, or raise tasks.max.limit in the worker config (each task is a thread)"
    )
    assert refused.value.errors == {"tasks.max": [reason]}
    assert herder.connectors() == []
    assert threading.active_count() <= threads + 2  # nothing started thousands of threads

    with authed(create_app(herder, secured(herder.config.raw()))) as client:
        body = {"name": name, "config": {"connector.class": "fanout", "tasks.max": 2000}}
        created = client.post("/connectors", json=body)
        assert created.status_code == 400
        assert created.json()["errors"] == {"tasks.max": [reason]}
        checked = client.put(
            "/connector-plugins/fanout/config/validate", json={"name": name, "tasks.max": "2000"}
        ).json()
        assert checked["error_count"] == 1
        [entry] = [c for c in checked["configs"] if c["definition"]["name"] == "tasks.max"]
        assert entry["value"]["errors"] == [reason]


def test_the_limit_is_a_worker_setting(herder_factory: Callable[..., Herder], name: str) -> None:
    herder = herder_factory(**{"tasks.max.limit": 3})
    herder.create_connector(name, {"connector.class": "fanout", "tasks.max": "3"})
    wait_until(lambda: _running_tasks(herder, name) == [0, 1, 2], 10, "three tasks")
    with pytest.raises(ConfigError) as refused:
        herder.create_connector(f"{name}-4", {"connector.class": "fanout", "tasks.max": "4"})
    assert "tasks.max.limit=3" in refused.value.errors["tasks.max"][0]


def test_a_stored_config_above_the_limit_fails_only_its_connector(
    herder_factory: Callable[..., Herder], name: str
) -> None:
    first = herder_factory()
    first.create_connector(name, {"connector.class": "fanout", "tasks.max": "3"})
    first.create_connector(f"{name}-ok", {"connector.class": "fanout", "tasks.max": "1"})
    wait_until(lambda: len(_running_tasks(first, name)) == 3, 10, "three tasks")
    first.stop()

    # The worker restarts with a lower limit: the stored config now asks for too much.
    second = herder_factory(**{"tasks.max.limit": 2})
    status = second.connector_status(name)
    assert status["connector"]["state"] == "FAILED"
    assert "tasks.max=3 exceeds this worker's tasks.max.limit=2" in status["connector"]["trace"]
    assert second.worker.task_ids(name) == []
    wait_until(lambda: _running_tasks(second, f"{name}-ok") == [0], 10, "the other connector")


def test_more_task_configs_than_tasks_max_fail_the_connector(
    herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory()
    config = {"connector.class": "fanout", "tasks.max": "2", "extra_tasks": "1"}
    herder.create_connector(name, config)
    status = herder.connector_status(name)
    assert status["connector"]["state"] == "FAILED"
    assert "generated 3 task configs, more than tasks.max=2" in status["connector"]["trace"]
    assert herder.worker.task_ids(name) == []

    # tasks.max.enforce=false (deprecated in Kafka) runs them, as Kafka does...
    herder.put_connector_config(name, {**config, "tasks.max.enforce": "false"})
    wait_until(lambda: _running_tasks(herder, name) == [0, 1, 2], 10, "three tasks")


def test_enforce_false_still_stops_at_the_worker_limit(
    herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory(**{"tasks.max.limit": 2})
    config = {"connector.class": "fanout", "tasks.max": "2", "extra_tasks": "5"}
    herder.create_connector(name, {**config, "tasks.max.enforce": "false"})
    trace = herder.connector_status(name)["connector"]["trace"]
    assert "generated 7 task configs, more than this worker's tasks.max.limit=2" in trace
    assert herder.worker.task_ids(name) == []


def test_tasks_max_enforce_must_be_a_boolean(
    herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory()
    with pytest.raises(ConfigError) as refused:
        herder.create_connector(name, {"connector.class": "fanout", "tasks.max.enforce": "maybe"})
    assert refused.value.errors == {"tasks.max.enforce": ["must be true or false"]}


def test_task_configs_are_strings_over_rest(
    herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory()
    herder.create_connector(name, {"connector.class": "fanout", "tasks.max": "2"})
    expected = {
        "ratio": "0.5",
        "enabled": "true",
        "tags": "a,b",
        "nested": '{"k": 1}',
    }
    with authed(create_app(herder, secured(herder.config.raw()))) as client:
        tasks = client.get(f"/connectors/{name}/tasks").json()
        assert tasks == [
            {"id": {"connector": name, "task": i}, "config": {"index": str(i), **expected}}
            for i in range(2)
        ]
        by_id = client.get(f"/connectors/{name}/tasks-config").json()
        assert by_id == {f"{name}-{i}": {"index": str(i), **expected} for i in range(2)}
