"""Connector names: any Unicode round-trips (Location percent-encoded); length and characters
are bounded with 400s naming ``name``, never a 500."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from fastapi.testclient import TestClient

from hub.rest import create_app
from hub.rest.server import RestServer
from hub.runtime.names import MAX_LENGTH
from tests.fixtures.rest_auth import AUTH, TOKEN, authed, secured
from tests.hub.rest.conftest import source_config
from tests.hub.rest.fake_herder import FakeHerder

UNICODE = "données-café 日本 🚰 Ωmega"


@pytest.fixture
def server() -> Iterator[RestServer]:
    with RestServer(create_app(FakeHerder(), secured()), port=0) as server:
        yield server


def test_a_unicode_name_round_trips_over_http(server: RestServer) -> None:
    with httpx.Client(base_url=server.url, headers=AUTH) as client:
        created = client.post("/connectors", json={"name": UNICODE, "config": source_config()})
        assert created.status_code == 201, created.text
        location = created.headers["location"]
        assert location == "/connectors/" + quote(UNICODE, safe="")
        assert location.isascii()
        got = client.get(location)
        assert got.status_code == 200 and got.json()["name"] == UNICODE
        assert client.get("/connectors").json() == [UNICODE]
        assert client.get(f"{location}/status").json()["name"] == UNICODE
        assert client.delete(location).status_code == 204
        assert client.get(location).status_code == 404


def test_put_creates_a_unicode_name_with_its_location(server: RestServer) -> None:
    with httpx.Client(base_url=server.url, headers=AUTH) as client:
        path = "/connectors/" + quote(UNICODE, safe="")
        created = client.put(f"{path}/config", json=source_config())
        assert created.status_code == 201, created.text
        assert created.headers["location"] == path
        assert client.put(f"{path}/config", json=source_config()).status_code == 200
        assert client.get(path).json()["config"]["name"] == UNICODE


def test_a_retry_after_create_sees_409_not_a_second_500(client: TestClient) -> None:
    body = {"name": "ünïcode", "config": source_config()}
    assert client.post("/connectors", json=body).status_code == 201
    again = client.post("/connectors", json=body)
    assert again.status_code == 409


@pytest.mark.parametrize("length", [MAX_LENGTH + 1, 1_500_000])
def test_a_name_over_the_limit_is_400(length: int) -> None:
    # The 1.5M-character name is also over the body limit: allow it here to reach the name rule.
    app = create_app(FakeHerder(), secured({"rest.request.max.bytes": 4 * 1024 * 1024}))
    with authed(app, raise_server_exceptions=False) as client:
        body = {"name": "n" * length, "config": source_config()}
        response = client.post("/connectors", json=body)
        assert response.status_code == 400
        reason = f"must be at most {MAX_LENGTH} characters (got {length})"
        assert response.json()["errors"] == {"name": [f"Value error, {reason}"]}
        assert len(response.text) < 2000  # the answer does not echo the whole name
        assert client.get("/connectors").json() == []


def test_a_name_at_the_limit_is_fine(client: TestClient) -> None:
    name = "é" * MAX_LENGTH
    created = client.post("/connectors", json={"name": name, "config": source_config()})
    assert created.status_code == 201
    assert client.get("/connectors/" + quote(name, safe="")).status_code == 200


def test_a_huge_name_in_the_path_is_refused_cleanly(server: RestServer) -> None:
    """1.5M characters in the URL (too long for httpx to send): a 4xx, then the server goes on."""
    body = json.dumps(source_config()).encode()
    request = (
        f"PUT /connectors/{'n' * 1_500_000}/config HTTP/1.1\r\nHost: localhost\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        with contextlib.suppress(OSError):  # the server may refuse and close before the end
            sock.sendall(request)
        status_line = sock.makefile("rb").readline()
    assert status_line.startswith(b"HTTP/1.1 4"), status_line
    assert httpx.get(f"{server.url}/connectors", headers=AUTH).json() == []


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("   ", "must not be empty"),
        ("a/b", "must not contain '/' or control characters"),
        ("tab\there", "must not contain '/' or control characters"),
        ("c1\u0085control", "must not contain '/' or control characters"),
    ],
)
def test_unaddressable_names_are_400(client: TestClient, name: str, reason: str) -> None:
    response = client.post("/connectors", json={"name": name, "config": source_config()})
    assert response.status_code == 400
    assert response.json()["errors"] == {"name": [f"Value error, {reason}"]}


def test_put_with_a_control_character_in_the_path_is_400(client: TestClient) -> None:
    response = client.put("/connectors/bad%07name/config", json=source_config())
    assert response.status_code == 400
    assert "name" in response.json()["errors"]
