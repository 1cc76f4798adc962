"""What ``sluice up`` and ``sluice broker`` refuse or do by default (docs/security.md).

Each refusal is one log line and exit code 1, never a traceback; a default ``sluice up`` on a
network address serves its REST API with the generated token and keeps its broker on loopback.
"""

from __future__ import annotations

import json
import re
import socket
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.fixtures._process import REPO
from tests.fixtures.broker import wait_until
from tests.fixtures.hub import free_port

TIMEOUT = 60


def sluice(*args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluice", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def assert_one_line_refusal(result: subprocess.CompletedProcess[str], text: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if text in line]
    assert len(lines) == 1, output


def test_broker_refuses_a_network_address_without_opt_in(tmp_path: Path) -> None:
    result = sluice("broker", "--data-dir", str(tmp_path), "--host", "0.0.0.0", "--port", "0")
    assert_one_line_refusal(result, "refusing to run the broker on 0.0.0.0")
    assert "--allow-insecure-network" in result.stderr
    assert not any(tmp_path.iterdir())  # refused before anything was opened


def test_up_refuses_an_embedded_broker_beyond_loopback(tmp_path: Path) -> None:
    result = sluice(
        "up", "--data-dir", str(tmp_path / "data"), "--broker-host", "0.0.0.0",
        "--broker-port", "0", "--rest-port", str(free_port()),
    )  # fmt: skip
    assert_one_line_refusal(result, "refusing to run the broker on 0.0.0.0")
    assert "--allow-insecure-network" not in result.stderr  # no opt-in for the hub's broker


def test_up_refuses_the_unauthenticated_opt_out_beyond_loopback(tmp_path: Path) -> None:
    config = tmp_path / "worker.json"
    config.write_text(json.dumps({"rest.auth.allow.unauthenticated": "true"}))
    result = sluice(
        "up", "--data-dir", str(tmp_path / "data"), "--host", "0.0.0.0", "--broker-port", "0",
        "--rest-port", str(free_port()), "--config", str(config),
    )  # fmt: skip
    assert_one_line_refusal(result, "accepted only on a loopback rest.host.name")


def _network_address() -> str | None:
    """A non-loopback address of this machine (no packet is sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


def test_up_on_a_network_address_needs_the_token_and_keeps_the_broker_local(
    tmp_path: Path,
) -> None:
    rest_port, data_dir = free_port(), tmp_path / "data"
    log_path = tmp_path / "hub.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "up", "--data-dir", str(data_dir), "--host",
             "0.0.0.0", "--broker-port", "0", "--rest-port", str(rest_port)],
            stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
        )  # fmt: skip
    try:
        wait_until(lambda: "hub listening" in log_path.read_text(), TIMEOUT, "hub listening")
        text = log_path.read_text()
        broker = re.search(r"broker listening address=([\d.]+):(\d+)", text)
        assert broker and broker.group(1) == "127.0.0.1", text
        token_file = data_dir / "hub.token"
        token = token_file.read_text().strip()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert token not in text and str(token_file.resolve()) in text
        url = f"http://127.0.0.1:{rest_port}"
        assert httpx.get(f"{url}/connectors").status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{url}/connectors", headers=auth).status_code == 200
        address = _network_address()
        if address is not None:  # reachable there with the token; the broker is not
            assert httpx.get(f"http://{address}:{rest_port}/", headers=auth).status_code == 200
            with pytest.raises(OSError):
                socket.create_connection((address, int(broker.group(2))), timeout=5).close()
    finally:
        proc.terminate()
        proc.wait(30)
