"""Who may call the REST API: credentials required by default, the loopback-only opt-out,
Bearer/Basic checks, the console's session cookie, and the CSRF rules (hub/rest/csrf.py)."""

from __future__ import annotations

import base64
import logging

import pytest
from fastapi.testclient import TestClient

from hub.rest import create_app
from hub.rest.auth import InsecureBindError, is_loopback
from tests.fixtures.rest_auth import BASE_URL, OPEN, anonymous
from tests.hub.rest.fake_herder import SOURCE, FakeHerder
from tests.hub.rest.test_connectors import assert_error

TOKEN = "s3cret-token"
OWN_ORIGIN = BASE_URL
FOREIGN_ORIGIN = "http://attacker.example"


def basic(user_password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(user_password.encode()).decode()}


def bearer(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def herder() -> FakeHerder:
    fake = FakeHerder()
    fake.create_connector("c", {"connector.class": SOURCE, "file": "/tmp/f", "topic": "t"})
    return fake


@pytest.fixture
def secured(herder: FakeHerder) -> TestClient:
    config = {"rest.auth.token": TOKEN, "rest.auth.basic": "admin:pw", "rest.host.name": "0.0.0.0"}
    return anonymous(create_app(herder, config))


# -- credentials ---------------------------------------------------------------------------------
def test_an_app_without_credentials_is_refused_by_default() -> None:
    """Secure default: no token, no basic user, no opt-out -> no app at all."""
    with pytest.raises(InsecureBindError, match=r"rest\.auth\.token.*hub\.token"):
        create_app(FakeHerder(), {})
    with pytest.raises(InsecureBindError):
        create_app(FakeHerder(), {"rest.host.name": "127.0.0.1"})


def test_unauthenticated_request_refused(secured: TestClient) -> None:
    missing = assert_error(secured.get("/connectors"), 401)
    assert missing["message"] == "Authentication required"
    response = secured.get("/connectors")
    assert "Bearer" in response.headers["www-authenticate"]
    assert "Basic" in response.headers["www-authenticate"]
    for headers in (
        bearer("wrong"),
        basic("admin:wrong"),
        {"Authorization": "Basic !!!notbase64"},
        {"Authorization": f"Token {TOKEN}"},
    ):
        assert_error(secured.get("/connectors", headers=headers), 401)
    assert_error(secured.put("/admin/loggers/root", json={"level": "INFO"}), 401)
    assert_error(secured.post("/connectors/c/restart"), 401)
    from sluice.web import build_app  # the console's routes come with the application's app

    console = anonymous(build_app(FakeHerder(), {"rest.auth.token": TOKEN}))
    assert_error(console.get("/console/api/topics"), 401)


def test_token_and_basic_accepted(secured: TestClient) -> None:
    assert secured.get("/connectors", headers=bearer()).status_code == 200
    assert secured.get("/connectors", headers=basic("admin:pw")).status_code == 200


def test_docs_stay_public(secured: TestClient) -> None:
    assert secured.get("/openapi.json").status_code == 200
    assert secured.get("/docs").status_code == 200
    schemes = secured.get("/openapi.json").json()["components"]["securitySchemes"]
    assert {s["scheme"] for s in schemes.values()} == {"bearer", "basic"}


def test_token_from_real_worker_config() -> None:
    from hub.runtime import config as config_module

    config = config_module.WorkerConfig.from_mapping(
        {"rest.host.name": "0.0.0.0", "rest.auth.token": TOKEN}
    )
    client = anonymous(create_app(FakeHerder(), config))
    assert client.get("/", headers=bearer()).status_code == 200
    assert client.get("/").status_code == 401


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", "example.com"])
def test_opt_out_refused_beyond_loopback(host: str) -> None:
    with pytest.raises(InsecureBindError, match="loopback"):
        create_app(FakeHerder(), {"rest.host.name": host, **OPEN})
    with pytest.raises(InsecureBindError):
        create_app(FakeHerder(), {"rest.host.name": host}, allow_unauthenticated=True)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"])
def test_opt_out_on_loopback_serves_open_with_a_warning(
    host: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert is_loopback(host)
    with caplog.at_level(logging.WARNING, logger="hub.rest.auth"):
        app = create_app(FakeHerder(), {"rest.host.name": host, **OPEN})
    assert "unauthenticated" in caplog.text
    assert anonymous(app).get("/").status_code == 200


def test_malformed_basic_setting_is_rejected() -> None:
    with pytest.raises(ValueError, match="user:password"):
        create_app(FakeHerder(), {"rest.auth.basic": "no-colon"})


def test_open_api_ignores_authorization_headers() -> None:
    client = anonymous(create_app(FakeHerder(), OPEN))
    for header in ("Basic !!!notbase64", "Bearer whatever", "Digest x"):
        assert client.get("/connectors", headers={"Authorization": header}).status_code == 200


# -- Host allow-list (DNS rebinding) ---------------------------------------------------------------
@pytest.mark.parametrize(
    "host", ["attacker.example", "attacker.example:8083", "127.0.0.1.attacker.example", ""]
)
def test_spoofed_host_header_refused(secured: TestClient, host: str) -> None:
    response = secured.get("/connectors", headers={**bearer(), "Host": host})
    assert_error(response, 421)
    assert "rest.allowed.hosts" in response.json()["message"]
    # refused before anything else: even the public pages and the webhook route
    assert secured.get("/openapi.json", headers={"Host": host}).status_code == 421
    assert secured.post("/ingest/c", headers={"Host": host}).status_code == 421


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8083", "localhost:8083", "[::1]:8083", "10.1.2.3:8083", "LOCALHOST"]
)
def test_loopback_and_address_hosts_allowed(secured: TestClient, host: str) -> None:
    assert secured.get("/connectors", headers={**bearer(), "Host": host}).status_code == 200


def test_configured_host_names_allowed() -> None:
    config = {
        "rest.auth.token": TOKEN,
        "rest.advertised.host.name": "hub.internal",
        "rest.allowed.hosts": "sluice.example.com, .corp.example",
    }
    client = anonymous(create_app(FakeHerder(), config))
    for host in ("hub.internal:8083", "sluice.example.com", "a.corp.example"):
        assert client.get("/", headers={**bearer(), "Host": host}).status_code == 200, host
    assert client.get("/", headers={**bearer(), "Host": "other.example"}).status_code == 421
    everything = anonymous(create_app(FakeHerder(), {**config, "rest.allowed.hosts": "*"}))
    assert everything.get("/", headers={**bearer(), "Host": "any.example"}).status_code == 200


# -- CSRF: state-changing requests ----------------------------------------------------------------
def signed_in(client: TestClient) -> TestClient:
    response = client.post("/console/login", json={"token": TOKEN}, headers={"Origin": OWN_ORIGIN})
    assert response.status_code == 204, response.text
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
    assert TOKEN not in cookie
    return client


def test_cross_site_post_with_only_a_cookie_refused(
    secured: TestClient, herder: FakeHerder
) -> None:
    """A page elsewhere makes the signed-in browser POST a body-less restart: refused."""
    signed_in(secured)
    assert secured.get("/connectors").status_code == 200  # the cookie does sign in
    herder.calls.clear()
    for headers in (
        {"Origin": FOREIGN_ORIGIN},  # a cross-site form POST
        {"Origin": FOREIGN_ORIGIN, "Content-Type": "application/json"},
        {"Origin": "null"},  # sandboxed frame, file:// page
        {},  # no Origin at all: not the console's script
        {"Origin": OWN_ORIGIN, "Content-Type": "text/plain"},  # a simple request
    ):
        response = secured.post("/connectors/c/restart", headers=headers)
        assert_error(response, 403)
    for headers in ({"Origin": FOREIGN_ORIGIN}, {}):
        assert_error(secured.delete("/connectors/c", headers=headers), 403)
        assert_error(secured.put("/connectors/c/pause", headers=headers), 403)
    assert not [c for c in herder.calls if c[0] in ("restart_connector", "delete_connector")]
    assert "c" in herder.connectors()


def test_console_style_request_with_cookie_accepted(secured: TestClient) -> None:
    signed_in(secured)
    headers = {"Origin": OWN_ORIGIN, "Content-Type": "application/json"}
    assert secured.post("/connectors/c/restart", headers=headers).status_code == 204
    assert secured.put("/connectors/c/pause", headers=headers).status_code == 202


def test_cross_site_post_without_credentials_refused(secured: TestClient) -> None:
    assert_error(secured.post("/connectors/c/restart", headers={"Origin": FOREIGN_ORIGIN}), 401)
    assert_error(secured.post("/connectors/c/restart"), 401)


def test_foreign_origin_refused_even_with_credentials(secured: TestClient) -> None:
    """A browser that cached Basic credentials sends them cross-site by itself."""
    for creds in (basic("admin:pw"), bearer()):
        response = secured.post(
            "/connectors/c/restart", headers={**creds, "Origin": FOREIGN_ORIGIN}
        )
        assert_error(response, 403)
    assert secured.post("/connectors/c/restart", headers=bearer()).status_code == 204


def test_listed_cors_origin_may_call_with_a_credential() -> None:
    config = {"rest.auth.token": TOKEN, "access.control.allow.origin": "http://console.example"}
    client = anonymous(create_app(FakeHerder(), config))
    response = client.post(
        "/connectors/none/restart", headers={**bearer(), "Origin": "http://console.example"}
    )
    assert response.status_code == 404  # past auth and CSRF, to the herder


def test_cross_site_post_refused_on_the_open_loopback_api() -> None:
    client = anonymous(create_app(FakeHerder(), OPEN))
    assert_error(client.post("/connectors/c/restart", headers={"Origin": FOREIGN_ORIGIN}), 403)
    assert client.post("/connectors/none/restart").status_code == 404  # curl-style: allowed


# -- console sign-in -------------------------------------------------------------------------------
def test_sign_in_out_and_session_state(secured: TestClient) -> None:
    assert secured.get("/console/session").json() == {
        "required": True,
        "signed_in": False,
        "methods": ["token", "basic"],
    }
    assert_error(secured.post("/console/login", json={"token": "wrong"}), 401)
    assert_error(secured.post("/console/login", json={"user": "admin", "password": "no"}), 401)
    assert_error(
        secured.post("/console/login", json={"token": TOKEN}, headers={"Origin": FOREIGN_ORIGIN}),
        403,
    )
    assert "set-cookie" not in secured.post("/console/login", json={"token": "x"}).headers
    signed_in(secured)
    assert secured.get("/console/session").json()["signed_in"] is True
    out = secured.post(
        "/console/logout", headers={"Origin": OWN_ORIGIN, "Content-Type": "application/json"}
    )
    assert out.status_code == 204
    assert secured.get("/console/session").json()["signed_in"] is False
    assert_error(secured.get("/connectors"), 401)


def test_sign_in_with_basic_user(secured: TestClient) -> None:
    response = secured.post("/console/login", json={"user": "admin", "password": "pw"})
    assert response.status_code == 204
    assert secured.get("/connectors").status_code == 200


def test_forged_session_cookie_refused(secured: TestClient) -> None:
    secured.cookies.set("sluice_session_8083", "made-up")
    assert_error(secured.get("/connectors"), 401)
