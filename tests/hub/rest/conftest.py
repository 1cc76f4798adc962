"""Fixtures for REST API tests: a fake herder behind a real app, driven by TestClient."""

from __future__ import annotations

import contextlib
import tempfile
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hub.rest import create_app
from tests.fixtures.rest_auth import TOKEN, authed
from tests.hub.rest.fake_herder import SOURCE, FakeHerder


@pytest.fixture
def herder() -> FakeHerder:
    return FakeHerder()


@pytest.fixture
def client(herder: FakeHerder) -> Iterator[TestClient]:
    # raise_server_exceptions=False: a 500 must reach the test as the client would see it.
    app = create_app(herder, {"rest.auth.token": TOKEN})
    with authed(app, raise_server_exceptions=False) as test_client:
        yield test_client


def source_config(**overrides: str) -> dict[str, Any]:
    """A valid FileStreamSource config, as in Kafka Connect's quickstart."""
    return {"connector.class": SOURCE, "file": "/tmp/in.txt", "topic": "lines", **overrides}


@pytest.fixture
def created(client: TestClient) -> str:
    """Name of a connector created through the API, with two tasks."""
    body = {"name": "local-file-source", "config": source_config(**{"tasks.max": "2"})}
    assert client.post("/connectors", json=body).status_code == 201
    return "local-file-source"


@contextlib.contextmanager
def real_herder_client(bootstrap: str, prefix: str, **settings: Any) -> Iterator[TestClient]:
    """The REST app on a real Herder against ``bootstrap``, with internal topics of its own
    (``<prefix>-configs-<random>`` ...), offsets flushed every 200 ms and file connectors
    allowed under the system's temp directory; ``settings`` (dotted keys) override."""
    from hub.runtime.config import WorkerConfig
    from hub.runtime.herder import Herder

    unique = uuid.uuid4().hex[:8]
    config = WorkerConfig.from_mapping(
        {
            "bootstrap.servers": bootstrap,
            "config.storage.topic": f"{prefix}-configs-{unique}",
            "offset.storage.topic": f"{prefix}-offsets-{unique}",
            "status.storage.topic": f"{prefix}-status-{unique}",
            "offset.flush.interval.ms": 200,
            "rest.auth.token": TOKEN,
            "file.allowed.paths": tempfile.gettempdir(),  # where tmp_path lives
            **settings,
        }
    )
    herder = Herder(config)
    herder.start()
    try:
        with authed(create_app(herder, config), raise_server_exceptions=False) as client:
            yield client
    finally:
        herder.stop()
