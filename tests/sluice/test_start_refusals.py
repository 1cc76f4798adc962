"""Every refusal at start is one clear line on stderr, with no traceback, and starts nothing.

Each runs the real ``sluice up`` in a subprocess, as a user would. (A bad worker setting, one
line per key, is covered by ``test_start_errors.py``.)
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.hub import free_port


def _up(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "sluice", "up", "--data-dir", str(tmp_path / "data"),
        "--broker-port", "0", "--schema-registry-port", "0", *args,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def _errors(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return [line for line in done.stderr.splitlines() if " error " in line]


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_a_taken_rest_port_is_one_line_and_starts_nothing(tmp_path: Path, taken_port: int) -> None:
    done = _up(tmp_path, "--rest-port", str(taken_port))
    assert done.returncode == 1
    [line] = _errors(done)
    assert line.endswith(
        f"error sluice.node cannot serve the REST API on 127.0.0.1:{taken_port}: Address already "
        "in use; another process uses it: stop that one or choose another port (--rest-port, "
        "rest.port)"
    )
    assert "broker listening" not in done.stderr  # nothing started
    assert not list((tmp_path / "data").glob("__consumer_offsets-*"))


def test_a_taken_broker_port_is_one_line(tmp_path: Path, taken_port: int) -> None:
    done = _up(tmp_path, "--rest-port", str(free_port()), "--broker-port", str(taken_port))
    assert done.returncode == 1
    [line] = _errors(done)
    assert "error sluice.node broker failed to start" in line
    assert f"127.0.0.1:{taken_port}" in line and "address already in use" in line
