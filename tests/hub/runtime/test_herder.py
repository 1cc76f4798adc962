"""The Herder contract: validation, config changes, target states, source offsets, plugins."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from hub.api import ConfigError
from hub.runtime.errors import AlreadyExistsError, ConflictError, NotFoundError
from hub.runtime.herder import Herder
from sluice.embedded_broker import EmbeddedBroker
from tests.fixtures.broker import wait_until
from tests.hub.runtime.conftest import read_topic
from tests.hub.runtime.sample_plugins import STATE


def test_create_validates_and_rejects_duplicates(
    herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory()
    with pytest.raises(ConfigError) as bad_class:
        herder.create_connector(name, {"connector.class": "nope"})
    assert "connector.class" in bad_class.value.errors
    with pytest.raises(ConfigError) as bad:
        herder.create_connector(
            name, {"connector.class": "recording", "tasks.max": "0", "errors.tolerance": "some"}
        )
    assert set(bad.value.errors) >= {"topics", "tasks.max", "errors.tolerance"}
    with pytest.raises(ConfigError) as missing:
        herder.create_connector(name, {"connector.class": "counter"})
    assert missing.value.errors == {"topic": ["Missing required configuration"]}
    assert herder.connectors() == []

    info = herder.create_connector(name, {"connector.class": "counter", "topic": name})
    assert info["type"] == "source" and info["config"]["name"] == name
    assert info["tasks"] == [{"connector": name, "task": 0}]
    with pytest.raises(AlreadyExistsError):
        herder.create_connector(name, {"connector.class": "counter", "topic": name})
    with pytest.raises(NotFoundError):
        herder.connector_status("missing")


def test_changing_one_connector_restarts_only_it(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory()
    a, b = f"{name}-a", f"{name}-b"
    herder.create_connector(a, {"connector.class": "counter", "topic": a, "count": "10"})
    herder.create_connector(b, {"connector.class": "counter", "topic": b, "count": "10"})
    wait_until(lambda: STATE.starts[a] == 1 and STATE.starts[b] == 1, 10, "both started")
    done = {"offsets": [{"partition": {"p": 0}, "offset": {"n": 10}}]}
    wait_until(lambda: herder.connector_offsets(a) == done, 10, "a's first 10 records")
    created, info = herder.put_connector_config(
        a, {"connector.class": "counter", "topic": f"{a}-2", "count": "10"}
    )
    assert not created and info["config"]["topic"] == f"{a}-2"
    assert herder.task_configs(a)[0]["config"]["topic"] == f"{a}-2"
    wait_until(lambda: STATE.starts[a] == 2, 10, "a restarted")
    patched = herder.patch_connector_config(a, {"count": "20", "batch": None})
    assert patched["config"]["count"] == "20" and "batch" not in patched["config"]
    wait_until(lambda: STATE.starts[a] == 3, 10, "a restarted again")
    assert STATE.starts[b] == 1

    def got() -> list[int]:
        return [json.loads(m.value())["n"] for m in read_topic(hub_broker.bootstrap, f"{a}-2")]

    # offsets carried over the config change: the new topic gets only 11..20
    wait_until(lambda: len(got()) >= 10, 10, "a's data in its new topic")
    assert got() == list(range(11, 21))
    assert herder.connector_topics(a) == sorted([a, f"{a}-2"])

    herder.delete_connector(a)
    assert herder.connectors() == [b]
    with pytest.raises(NotFoundError):
        herder.connector_status(a)


def test_source_offsets_alter_and_reset_only_when_stopped(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory()
    herder.create_connector(name, {"connector.class": "counter", "topic": name, "count": "100"})
    expected = {"offsets": [{"partition": {"p": 0}, "offset": {"n": 100}}]}
    wait_until(lambda: herder.connector_offsets(name) == expected, 10, "offsets at 100")
    change = [{"partition": {"p": 0}, "offset": {"n": 50}}]
    with pytest.raises(ConflictError):
        herder.alter_connector_offsets(name, change)
    with pytest.raises(ConflictError):
        herder.reset_connector_offsets(name)

    herder.stop_connector(name)
    assert herder.connector_status(name)["connector"]["state"] == "STOPPED"
    assert "altered" in herder.alter_connector_offsets(name, change)
    assert herder.connector_offsets(name) == {"offsets": change}
    herder.resume_connector(name)

    def values() -> list[int]:
        return [json.loads(m.value())["n"] for m in read_topic(hub_broker.bootstrap, name)]

    wait_until(lambda: len(values()) == 150, 10, "51..100 again")
    assert values()[100:] == list(range(51, 101))

    herder.stop_connector(name)
    assert "reset" in herder.reset_connector_offsets(name)
    assert herder.connector_offsets(name) == {"offsets": []}
    herder.resume_connector(name)
    wait_until(lambda: len(values()) == 250, 10, "everything again after reset")


def test_validate_config_and_plugin_config(herder_factory: Callable[..., Herder]) -> None:
    herder = herder_factory()
    result = herder.validate_config("recording", {"connector.class": "recording", "name": "x"})
    assert result["name"] == "recording"
    assert result["error_count"] == 1
    by_name = {c["value"]["name"]: c for c in result["configs"]}
    assert by_name["topics"]["value"]["errors"] == ["Must configure one of topics or topics.regex"]
    assert by_name["tasks.max"]["definition"]["type"] == "INT"
    assert by_name["flush_upto"]["definition"]["default_value"] == "-1"
    assert "Common" in result["groups"] and "Error Handling" in result["groups"]

    ok = herder.validate_config("counter", {"name": "x", "topic": "t", "count": "5"})
    assert ok["error_count"] == 0
    bad = herder.validate_config("counter", {"name": "x", "count": "many"})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in bad["configs"]}
    assert errors["topic"] and errors["count"] and bad["error_count"] == 2
    with pytest.raises(NotFoundError):
        herder.validate_config("nope", {})

    keys = {k["name"]: k for k in herder.plugin_config("counter")}
    assert keys["topic"]["required"] is True and keys["topic"]["type"] == "STRING"
    assert keys["count"]["default_value"] == "100" and keys["count"]["type"] == "INT"
    plugins = herder.plugins()
    # ``class`` is the Java class name a plugin stands in for (its alias), as tools expect.
    assert {"class": "org.example.CounterSource", "type": "source", "version": "0.1.0"} in plugins
    assert {"class": "recording", "type": "sink", "version": "0.1.0"} in plugins  # has none
    assert all(p["type"] in ("source", "sink") for p in plugins)
    everything = herder.plugins(connectors_only=False)
    json_converter = "org.apache.kafka.connect.json.JsonConverter"
    assert {"class": json_converter, "type": "converter", "version": "0.1.0"} in everything


def test_target_states_and_statuses_survive_a_worker_restart(
    herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory()
    paused, stopped = f"{name}-p", f"{name}-s"
    herder.create_connector(paused, {"connector.class": "counter", "topic": paused})
    herder.create_connector(stopped, {"connector.class": "counter", "topic": stopped})
    herder.pause_connector(paused)
    herder.stop_connector(stopped)
    herder.stop()

    again = herder_factory()
    assert again.connectors() == sorted([paused, stopped])
    status = again.connector_status(paused)
    assert status["connector"]["state"] == "PAUSED"
    wait_until(lambda: again.task_status(paused, 0)["state"] == "PAUSED", 10, "task PAUSED")
    assert again.connector_status(stopped) == {
        "name": stopped,
        "connector": {"state": "STOPPED", "worker_id": again.worker_id},
        "tasks": [],
        "type": "source",
    }
    assert again.connector_config(paused)["topic"] == paused


def test_connector_that_fails_to_start_is_failed_until_fixed(
    herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory()
    config = {"connector.class": "counter", "topic": name, "fail_connector": "true"}
    herder.create_connector(name, config)
    status = herder.connector_status(name)
    assert status["connector"]["state"] == "FAILED"
    assert "connector refuses to start" in status["connector"]["trace"]
    assert status["tasks"] == []
    herder.put_connector_config(name, {**config, "fail_connector": "false"})
    wait_until(
        lambda: [t["state"] for t in herder.connector_status(name)["tasks"]] == ["RUNNING"],
        10,
        "running after the fix",
    )
    assert herder.connector_status(name)["connector"] == {
        "state": "RUNNING",
        "worker_id": herder.worker_id,
    }
