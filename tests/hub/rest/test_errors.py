"""Errors the herder did not plan for still answer in Connect's shape, without a trace."""

from __future__ import annotations

from fastapi.testclient import TestClient

from hub.rest import create_app
from hub.runtime.errors import BadRequestError, ConflictError, HerderError
from tests.fixtures.rest_auth import authed, secured
from tests.hub.rest.fake_herder import FakeHerder
from tests.hub.rest.test_connectors import assert_error


class Exploding(FakeHerder):
    def __init__(self, exc: Exception) -> None:
        super().__init__()
        self.exc = exc

    def connectors(self) -> list[str]:
        raise self.exc


def client_for(exc: Exception) -> TestClient:
    return authed(create_app(Exploding(exc), secured()), raise_server_exceptions=False)


def test_unexpected_exception_is_500_without_trace() -> None:
    response = client_for(RuntimeError("secret\nline two")).get("/connectors")
    body = assert_error(response, 500)
    assert "RuntimeError" in body["message"]
    assert "Traceback" not in response.text and "line two" not in response.text


def test_herder_errors_map_to_their_status() -> None:
    assert_error(client_for(ConflictError("rebalance in progress")).get("/connectors"), 409)
    assert_error(client_for(BadRequestError("bad")).get("/connectors"), 400)
    body = assert_error(client_for(HerderError("worker not ready")).get("/connectors"), 500)
    assert body["message"] == "worker not ready"
