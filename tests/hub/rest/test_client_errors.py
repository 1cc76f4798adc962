"""Malformed HTTP requests cost one log line per kind and interval, not one per connection."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest

from hub.rest import create_app
from hub.rest.client_errors import throttle_client_errors
from hub.rest.server import RestServer
from sluice.throttled_log import ThrottledLog
from tests.fixtures.broker import wait_until
from tests.fixtures.rest_auth import secured
from tests.hub.rest.fake_herder import FakeHerder


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    """The process-wide filter with a fresh window on a clock the test moves."""
    installed = throttle_client_errors()
    before = installed.throttled
    clock = Clock()
    installed.throttled = ThrottledLog(
        logging.getLogger("hub.rest.client_errors"), "malformed HTTP requests", clock=clock
    )
    yield clock
    installed.throttled = before


def _garbage(server: RestServer) -> None:
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(b"\x16\x03\x01 this is not HTTP\r\n\r\n")
        sock.recv(1024)  # uvicorn answers 400 and closes


def test_a_flood_of_malformed_requests_is_one_line_then_a_summary(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(FakeHerder(), secured())
    with RestServer(app, port=0) as server, caplog.at_level(logging.WARNING):
        for _ in range(30):
            _garbage(server)
        wait_until(lambda: caplog.records, 5, "the first line")
        assert [r.getMessage() for r in caplog.records] == ["Invalid HTTP request received."]
        assert caplog.records[0].name == "hub.rest.client_errors"
        clock.now += 61
        _garbage(server)
        wait_until(lambda: len(caplog.records) == 3, 5, "the summary line")
    summary = caplog.records[1]
    assert summary.getMessage() == "malformed HTTP requests suppressed in the last 61s"
    assert summary.total == 29  # type: ignore[attr-defined]
    assert not [r for r in caplog.records if r.name == "uvicorn.error"]
