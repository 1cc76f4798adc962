"""create_app: OpenAPI document and docs page, and CORS from Connect's worker keys."""

from __future__ import annotations

from fastapi.testclient import TestClient

from hub.rest import create_app
from tests.fixtures.rest_auth import authed, secured
from tests.hub.rest.fake_herder import FakeHerder

ORIGIN = "http://console.example"


def test_openapi_and_docs_are_served(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    assert "/connectors/{name}/tasks/{task}/restart" in paths
    assert "/connector-plugins/{plugin}/config/validate" in paths
    assert "/admin/loggers/{name}" in paths
    assert "ErrorResponse" in schema["components"]["schemas"]
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_no_cors_headers_by_default(client: TestClient) -> None:
    response = client.get("/connectors", headers={"Origin": ORIGIN})
    assert "access-control-allow-origin" not in response.headers


def test_cors_from_worker_config() -> None:
    app = create_app(FakeHerder(), secured({"access.control.allow.origin": ORIGIN}))
    client = authed(app)
    preflight = client.options(
        "/connectors/x/pause",
        headers={"Origin": ORIGIN, "Access-Control-Request-Method": "PUT"},
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert "PUT" in preflight.headers["access-control-allow-methods"]
    simple = client.get("/connectors", headers={"Origin": ORIGIN})
    assert simple.headers["access-control-allow-origin"] == ORIGIN


def test_cors_methods_can_be_narrowed() -> None:
    config = {"access.control.allow.origin": "*", "access.control.allow.methods": "GET,POST"}
    client = authed(create_app(FakeHerder(), secured(config)))
    preflight = client.options(
        "/connectors/x/pause",
        headers={"Origin": ORIGIN, "Access-Control-Request-Method": "PUT"},
    )
    assert preflight.status_code == 400
