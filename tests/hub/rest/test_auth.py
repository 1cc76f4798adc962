"""Bearer/basic authentication and the refusal to serve an open API beyond loopback."""

from __future__ import annotations

import base64

import pytest
from fastapi.testclient import TestClient

from hub.rest import create_app
from hub.rest.auth import InsecureBindError, is_loopback
from tests.hub.rest.fake_herder import FakeHerder
from tests.hub.rest.test_connectors import assert_error

TOKEN = "s3cret-token"


def basic(user_password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(user_password.encode()).decode()}


@pytest.fixture
def secured() -> TestClient:
    config = {"rest.auth.token": TOKEN, "rest.auth.basic": "admin:pw", "rest.host.name": "0.0.0.0"}
    return TestClient(create_app(FakeHerder(), config))


def test_token_accepted(secured: TestClient) -> None:
    response = secured.get("/connectors", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200


def test_basic_accepted(secured: TestClient) -> None:
    assert secured.get("/connectors", headers=basic("admin:pw")).status_code == 200


def test_unauthenticated_and_wrong_credentials_rejected(secured: TestClient) -> None:
    missing = assert_error(secured.get("/connectors"), 401)
    assert missing["message"] == "Authentication required"
    response = secured.get("/connectors")
    assert "Bearer" in response.headers["www-authenticate"]
    assert "Basic" in response.headers["www-authenticate"]
    for headers in (
        {"Authorization": "Bearer wrong"},
        basic("admin:wrong"),
        {"Authorization": "Basic !!!notbase64"},
        {"Authorization": f"Token {TOKEN}"},
    ):
        assert_error(secured.get("/connectors", headers=headers), 401)
    assert_error(secured.put("/admin/loggers/root", json={"level": "INFO"}), 401)


def test_docs_stay_public(secured: TestClient) -> None:
    assert secured.get("/openapi.json").status_code == 200
    assert secured.get("/docs").status_code == 200
    schemes = secured.get("/openapi.json").json()["components"]["securitySchemes"]
    assert {s["scheme"] for s in schemes.values()} == {"bearer", "basic"}


def test_token_from_real_worker_config() -> None:
    config_module = pytest.importorskip("hub.runtime.config")
    config = config_module.WorkerConfig.from_mapping(
        {"rest.host.name": "0.0.0.0", "rest.auth.token": TOKEN}
    )
    client = TestClient(create_app(FakeHerder(), config))
    assert client.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert client.get("/").status_code == 401


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", "example.com"])
def test_refuses_open_api_beyond_loopback(host: str) -> None:
    with pytest.raises(InsecureBindError, match=r"rest\.auth\.token"):
        create_app(FakeHerder(), {"rest.host.name": host})


def test_open_api_beyond_loopback_when_explicitly_allowed() -> None:
    config = {"rest.host.name": "0.0.0.0", "rest.auth.allow.unauthenticated": "true"}
    assert TestClient(create_app(FakeHerder(), config)).get("/").status_code == 200
    app = create_app(FakeHerder(), {"rest.host.name": "0.0.0.0"}, allow_unauthenticated=True)
    assert TestClient(app).get("/").status_code == 200


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"])
def test_loopback_needs_no_auth(host: str) -> None:
    assert is_loopback(host)
    assert (
        TestClient(create_app(FakeHerder(), {"rest.host.name": host})).get("/").status_code == 200
    )


def test_malformed_basic_setting_is_rejected() -> None:
    with pytest.raises(ValueError, match="user:password"):
        create_app(FakeHerder(), {"rest.auth.basic": "no-colon"})


def test_open_api_ignores_authorization_headers(client: TestClient) -> None:
    for header in ("Basic !!!notbase64", "Bearer whatever", "Digest x"):
        assert client.get("/connectors", headers={"Authorization": header}).status_code == 200
