"""OPTIONS answers with every method of the path; 405 lists them all; HEAD works like GET;
CORS preflights still get the CORS answer when CORS is configured."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from hub.rest import create_app
from tests.fixtures.rest_auth import anonymous, secured
from tests.hub.rest.fake_herder import FakeHerder

ORIGIN = "http://console.example"


@pytest.mark.parametrize(
    ("path", "allow"),
    [
        ("/connectors", "GET, HEAD, POST, OPTIONS"),
        ("/connectors/any-name", "GET, HEAD, DELETE, OPTIONS"),
        ("/connectors/any-name/config", "GET, HEAD, PUT, PATCH, OPTIONS"),
        ("/connectors/any-name/offsets", "GET, HEAD, PATCH, DELETE, OPTIONS"),
        ("/connectors/any-name/pause", "PUT, OPTIONS"),
        ("/admin/loggers/hub", "GET, HEAD, PUT, OPTIONS"),
        ("/health", "GET, HEAD, OPTIONS"),
    ],
)
def test_options_lists_every_method(client: TestClient, path: str, allow: str) -> None:
    response = client.options(path)
    assert response.status_code == 204
    assert response.headers["allow"] == allow
    assert response.content == b""


def test_a_method_the_path_does_not_serve_is_405_with_the_full_allow(client: TestClient) -> None:
    response = client.delete("/connectors")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD, POST, OPTIONS"
    assert response.json() == {"error_code": 405, "message": "HTTP 405 Method Not Allowed"}


def test_head_answers_like_get_without_a_body(client: TestClient, created: str) -> None:
    get = client.get(f"/connectors/{created}")
    head = client.head(f"/connectors/{created}")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    assert client.head("/connectors/missing").status_code == 404


def test_unknown_paths_stay_404(client: TestClient) -> None:
    assert client.options("/no/such/path").status_code == 404


def test_cors_preflight_still_works_and_plain_options_too() -> None:
    client = anonymous(create_app(FakeHerder(), secured({"access.control.allow.origin": ORIGIN})))
    preflight = client.options(
        "/connectors/x/config",
        headers={"Origin": ORIGIN, "Access-Control-Request-Method": "PATCH"},
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert "PATCH" in preflight.headers["access-control-allow-methods"]
    plain = client.options("/connectors/x/config", headers={"Origin": ORIGIN})
    assert plain.status_code == 204
    assert plain.headers["allow"] == "GET, HEAD, PUT, PATCH, OPTIONS"
    assert plain.headers["access-control-allow-origin"] == ORIGIN
