"""hub.rest.client: request shapes and error decoding, over httpx's MockTransport."""

from __future__ import annotations

import base64

import httpx
import pytest

from hub.rest.client import ConnectClient, ConnectClientError


def client_with(handler, **kwargs) -> ConnectClient:  # type: ignore[no-untyped-def]
    return ConnectClient("http://hub:8083/", transport=httpx.MockTransport(handler), **kwargs)


def test_quotes_names_and_sends_restart_flags() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(202, json={"name": "a b", "connector": {}, "tasks": []})

    result = client_with(handler).restart("a b%", include_tasks=True, only_failed=False)
    assert result is not None and result["name"] == "a b"
    assert (
        seen[0].url.raw_path == b"/connectors/a%20b%25/restart?includeTasks=true&onlyFailed=false"
    )


def test_credentials() -> None:
    headers: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        headers.append(request.headers.get("authorization", ""))
        return httpx.Response(200, json=[])

    client_with(handler, token="t").connectors()
    client_with(handler, basic="u:p:w").connectors()
    assert headers[0] == "Bearer t"
    assert headers[1] == "Basic " + base64.b64encode(b"u:p:w").decode()


def test_connect_error_body_is_decoded() -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        body = {"error_code": 400, "message": "bad", "errors": {"topic": ["missing"]}}
        return httpx.Response(400, json=body)

    with pytest.raises(ConnectClientError) as info:
        client_with(handler).create("x", {})
    assert (info.value.status, info.value.message) == (400, "bad")
    assert info.value.errors == {"topic": ["missing"]}


def test_non_json_error_from_a_proxy() -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="<html>Bad Gateway</html>")

    with pytest.raises(ConnectClientError) as info:
        client_with(handler).connectors()
    assert info.value.status == 502 and "502" in info.value.message


def test_unreachable_is_status_zero() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(ConnectClientError) as info:
        client_with(handler).connectors()
    assert info.value.status == 0 and "cannot reach" in info.value.message


def test_empty_bodies_are_none() -> None:
    client = client_with(lambda _request: httpx.Response(204))
    assert client.restart("x") is None
    assert client.action("x", "stop") is None
