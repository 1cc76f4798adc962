"""Client settings that load code or run commands are refused in connector and pipeline
configs (hub/api/client_settings.py): at validation (400) and where the consumer is built."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException
from fastapi.testclient import TestClient

from tests.fixtures.broker import BrokerProcess, wait_until
from tests.hub.rest.conftest import real_herder_client
from tests.hub.rest.test_connectors import assert_error

pytest.importorskip("hub.runtime.herder")


@pytest.fixture
def api(broker: BrokerProcess, tmp_path: Path) -> Iterator[TestClient]:
    with real_herder_client(broker.bootstrap, "overrides") as client:
        yield client


def sink(tmp_path: Path, **extra: str) -> dict[str, str]:
    out = str(tmp_path / "out.txt")
    return {"connector.class": "FileStreamSink", "topics": "t", "file": out, **extra}


def test_control_librdkafka_loads_the_named_library(tmp_path: Path) -> None:
    """Without the check the consumer would dlopen whatever path the config names."""
    with pytest.raises(KafkaException, match="dlopen"):
        Consumer({"group.id": "g", "plugin.library.paths": str(tmp_path / "evil.so")})


@pytest.mark.parametrize(
    "key", ["plugin.library.paths", "ssl.engine.location", "sasl.kerberos.kinit.cmd"]
)
def test_code_loading_consumer_overrides_refused(api: TestClient, tmp_path: Path, key: str) -> None:
    config = sink(tmp_path, **{f"consumer.override.{key}": str(tmp_path / "evil.so")})
    response = api.post("/connectors", json={"name": "s", "config": config})
    assert_error(response, 400, fields=(f"consumer.override.{key}",))
    validated = api.put("/connector-plugins/FileStreamSink/config/validate", json=config).json()
    assert validated["error_count"] >= 1


def test_a_config_that_skipped_the_api_fails_its_task(api: TestClient, tmp_path: Path) -> None:
    """Configs can also arrive through the config topic (a local process can write it):
    the task refuses when it builds its consumer, before librdkafka sees the setting."""
    herder = api.app.state.herder  # type: ignore[attr-defined]
    name = f"sneaky-{uuid.uuid4().hex[:6]}"
    config = sink(tmp_path, name=name, **{"consumer.override.plugin.library.paths": "x.so"})
    herder.configs.put_connector_config(name, config)
    herder.configs.put_target_state(name, "STARTED")
    herder._start(name)  # what a restart does with every stored config

    def failed() -> str | None:
        tasks = api.get(f"/connectors/{name}/status").json()["tasks"]
        return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None

    trace = wait_until(failed, 30, "the task to fail")
    assert "plugin.library.paths" in str(trace) and "dlopen" not in str(trace)


def test_mirror_clients_refuse_code_loading_settings() -> None:
    """MirrorMaker 2 configs name client settings per cluster: refused the same way."""
    from connectors.mirror.clients import ClientConfigError, client_config

    raw = {"source.cluster.bootstrap.servers": "a:9092", "consumer.plugin.library.paths": "x.so"}
    with pytest.raises(ClientConfigError, match=r"plugin\.library\.paths"):
        client_config(raw, "source", "consumer", "a->b|m", "source")
