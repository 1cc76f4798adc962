"""Fixtures of the console tests: a console app over the shared broker (API tests) and one
``sluice up`` hub for all browser tests of a session (starting a hub costs seconds)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from fastapi.testclient import TestClient

from hub.runtime.config import WorkerConfig
from sluice.web import build_app
from tests.fixtures.broker import BrokerProcess
from tests.fixtures.hub import HubProcess
from tests.fixtures.rest_auth import TOKEN, authed


class ConfigOnlyHerder:
    """The part of a Herder the console uses: the worker config it runs with."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config

    def kafka_cluster_id(self) -> str:
        return "test"


def console_client(broker: BrokerProcess, **settings: Any) -> TestClient:
    config = WorkerConfig.from_mapping(
        {"bootstrap.servers": broker.bootstrap, "rest.auth.token": TOKEN, **settings}
    )
    app = build_app(ConfigOnlyHerder(config), config)
    return authed(app, raise_server_exceptions=False)


@pytest.fixture
def api(broker: BrokerProcess) -> Iterator[TestClient]:
    with console_client(broker) as client:
        yield client


def produce(bootstrap: str, topic: str, values: list[str], **kwargs: Any) -> None:
    """Writes ``values`` in order (``timestamps=[ms, ...]`` sets CreateTime) and waits for acks."""
    timestamps = kwargs.pop("timestamps", None)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i, value in enumerate(values):
        extra = {"timestamp": timestamps[i]} if timestamps else {}
        producer.produce(topic, value=value.encode(), **kwargs, **extra)
    assert producer.flush(10) == 0


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture(scope="session")
def console_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """One hub for the browser tests; rates sampled every second so the chart fills quickly."""
    root = tmp_path_factory.mktemp("console")
    settings = {
        "console.rates.interval.ms": 1000,
        "file.allowed.paths": str(tmp_path_factory.getbasetemp()),  # every test's tmp_path
    }
    proc = HubProcess(root / "hub", settings)
    with pytest.MonkeyPatch.context() as env:  # pipelines defined by the tests stay in tmp
        env.setenv("SLUICE_PIPELINES_DIR", str(root / "pipelines"))
        proc.start()
    yield proc
    proc.stop()


@pytest.fixture
def signed_in(console_hub: HubProcess, page: Any) -> None:
    """Signs ``page`` in to ``console_hub`` with its generated token (the session cookie lands
    in the page's browser context, as after the sign-in form)."""
    response = page.request.post(
        f"{console_hub.rest_url}/console/login", data={"token": console_hub.token}
    )
    assert response.status == 204, response.text()
