"""Request bodies are bounded (413) without being buffered, over a real uvicorn server.

A 50 MB config once answered 500 and left the worker's RSS 250 MB higher for good. Now a
declared Content-Length above ``rest.request.max.bytes`` is refused before the body is read,
and a chunked body is refused at the first chunk past the limit; either way the connection is
closed, so the rest of the body is never read.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator

import httpx
import pytest

from hub.rest import create_app
from hub.rest.server import RestServer
from tests.fixtures.rest_auth import AUTH, secured
from tests.hub.rest.conftest import source_config
from tests.hub.rest.fake_herder import FakeHerder

MB = 1024 * 1024
FIFTY_MB = 50 * MB


@pytest.fixture
def server() -> Iterator[RestServer]:
    server = RestServer(create_app(FakeHerder(), secured()), port=0)
    server.start()
    yield server
    server.stop()


def _raw_request(server: RestServer, head: bytes, body_to_offer: int) -> tuple[bytes, int]:
    """Sends ``head``, then offers up to ``body_to_offer`` bytes while the server keeps reading;
    returns (what the server answered, how many body bytes it took before answering)."""
    sent = 0
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(head)
        sock.settimeout(0.05)
        answer = b""
        chunk = b"x" * 65536
        while not answer:
            try:
                answer = sock.recv(65536)
                break
            except TimeoutError:
                pass
            if sent < body_to_offer:
                try:
                    sock.sendall(chunk)
                    sent += len(chunk)
                except OSError:  # the server closed its side after answering
                    break
        sock.settimeout(10)
        while True:
            try:
                more = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not more:
                break
            answer += more
    return answer, sent


def test_a_declared_50_mb_body_is_refused_before_it_is_read(server: RestServer) -> None:
    head = (
        b"POST /connectors HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {FIFTY_MB}\r\n\r\n".encode()
    )
    answer, sent = _raw_request(server, head, FIFTY_MB)
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line == b"HTTP/1.1 413 Request Entity Too Large"
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"connection: close" in headers.lower()
    assert json.loads(body) == {
        "error_code": 413,
        "message": f"Request body of {FIFTY_MB} bytes exceeds rest.request.max.bytes={MB}",
    }
    assert sent < 5 * MB  # answered long before the client could have sent its 50 MB


def test_a_chunked_50_mb_body_is_refused_at_the_limit(server: RestServer) -> None:
    def body() -> Iterator[bytes]:
        yield b'{"name": "big", "config": {"connector.class": "FileStreamSource", "x": "'
        for _ in range(FIFTY_MB // 65536):
            yield b"y" * 65536

    with httpx.Client(timeout=30, headers=AUTH) as client:
        try:
            response = client.post(f"{server.url}/connectors", content=body())
        except httpx.HTTPError:
            pytest.fail("the server must answer 413, not drop the connection")
    assert response.status_code == 413
    assert response.json() == {
        "error_code": 413,
        "message": f"Request body exceeds rest.request.max.bytes={MB}",
    }
    assert httpx.get(f"{server.url}/connectors", headers=AUTH).json() == []  # nothing created


def test_bodies_below_the_limit_are_served(server: RestServer) -> None:
    config = source_config(padding="p" * (MB // 2))
    body = {"name": "half-mb", "config": config}
    response = httpx.post(f"{server.url}/connectors", json=body, headers=AUTH)
    assert response.status_code == 201


def test_the_limit_is_a_worker_setting() -> None:
    app = create_app(FakeHerder(), secured({"rest.request.max.bytes": 2048}))
    with RestServer(app, port=0) as small, httpx.Client(base_url=small.url, headers=AUTH) as c:
        config = source_config(padding="p" * 4096)
        response = c.post("/connectors", json={"name": "c", "config": config})
        assert response.status_code == 413
        assert "rest.request.max.bytes=2048" in response.json()["message"]
        ok = c.post("/connectors", json={"name": "c", "config": source_config()})
        assert ok.status_code == 201


def test_a_bad_limit_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"rest\.request\.max\.bytes must be a positive number"):
        create_app(FakeHerder(), secured({"rest.request.max.bytes": "lots"}))


def test_memory_is_not_held_after_big_bodies(server: RestServer) -> None:
    """Twenty 50 MB attempts (declared and chunked) leave the process's RSS where it was."""

    def chunks() -> Iterator[bytes]:
        for _ in range(FIFTY_MB // 65536):
            yield b"z" * 65536

    head = (
        b"PUT /connectors/big/config HTTP/1.1\r\nHost: localhost\r\n"
        + f"Content-Type: application/json\r\nContent-Length: {FIFTY_MB}\r\n\r\n".encode()
    )
    _raw_request(server, head, MB)  # warm up the code paths before measuring
    before = _rss()
    with httpx.Client(timeout=30, headers=AUTH) as client:
        for _ in range(10):
            assert _raw_request(server, head, FIFTY_MB)[0].startswith(b"HTTP/1.1 413")
            assert client.put(f"{server.url}/connectors/big/config", content=chunks()).status_code
    grown = _rss() - before
    assert grown < 40 * MB, f"RSS grew by {grown / MB:.0f} MB"


def _rss() -> int:
    with open(f"/proc/{os.getpid()}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
