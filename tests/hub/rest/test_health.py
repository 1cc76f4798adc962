"""``GET /health`` (KIP-1017): Connect's bodies and status codes, and no credentials needed."""

from __future__ import annotations

from fastapi.testclient import TestClient

from hub.rest import create_app
from hub.runtime.config import WorkerConfig
from hub.runtime.herder import Herder
from hub.runtime.storage import MemoryConfigStore, MemoryOffsetStore, MemoryStatusStore
from tests.fixtures.rest_auth import AUTH, anonymous, secured
from tests.hub.rest.fake_herder import FakeHerder

HEALTHY = {
    "status": "healthy",
    "message": "Worker has completed startup and is ready to handle requests.",
}


def _unstarted_herder() -> Herder:
    config = WorkerConfig.from_mapping(secured({"bootstrap.servers": "127.0.0.1:1"}))
    return Herder(
        config,
        config_store=MemoryConfigStore(),
        offset_store=MemoryOffsetStore(),
        status_store=MemoryStatusStore(),
    )


def test_healthy(client: TestClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == HEALTHY


def test_needs_no_credentials_where_everything_else_does() -> None:
    client = anonymous(create_app(FakeHerder(), secured()))
    assert client.get("/connectors").status_code == 401
    assert client.get("/health").json() == HEALTHY
    assert client.get("/connectors", headers=AUTH).status_code == 200


def test_starting_is_503_and_stopped_is_500() -> None:
    herder = _unstarted_herder()
    client = anonymous(create_app(herder, herder.config))
    starting = client.get("/health")
    assert starting.status_code == 503
    assert starting.json() == {"status": "starting", "message": "Worker is still starting up."}
    herder.stop()
    stopped = client.get("/health")
    assert stopped.status_code == 500
    assert stopped.json()["status"] == "unhealthy"
    assert stopped.json()["message"].startswith(
        "Worker was unable to handle this request and may be unable to handle other requests."
    )
