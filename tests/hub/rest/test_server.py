"""RestServer: uvicorn on a background thread, bound before it starts."""

from __future__ import annotations

import socket

import httpx
import pytest

from hub.rest import create_app
from hub.rest.server import RestServer
from tests.fixtures.rest_auth import AUTH, secured
from tests.hub.rest.fake_herder import FakeHerder


def test_serves_on_a_free_port_and_stops() -> None:
    server = RestServer(create_app(FakeHerder(), secured()), port=0)
    server.start()
    try:
        assert server.port != 0
        assert (
            httpx.get(f"{server.url}/", headers=AUTH).json()["kafka_cluster_id"]
            == "fake-cluster-id"
        )
    finally:
        server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/", timeout=2)


def test_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = RestServer(create_app(FakeHerder(), secured()), port=port)
        with pytest.raises(OSError, match=f"cannot serve the REST API on 127.0.0.1:{port}"):
            server.start()
