"""What ``sluice up``/``connect`` print when they cannot run, and when they stop.

Each runs the real command in a subprocess and reads its stderr as a user would: a bad worker
setting is one line per key (no pydantic traceback), an unreachable cluster one line (not
librdkafka's reconnect noise), and a SIGINT stop of a busy ``sluice up`` exits 0 without an
ERROR line from the clients that lose the broker being stopped.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import free_port


def _sluice(*args: str, cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluice", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def test_bad_worker_config_is_one_line_per_key(tmp_path: Path) -> None:
    config = tmp_path / "worker.properties"
    config.write_text("offset.flush.interval.ms=abc\ntask.shutdown.graceful.timeout.ms=-1\n")
    done = _sluice(
        "connect", "--bootstrap", "127.0.0.1:9", "--config", str(config),
        "--rest-port", str(free_port()), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: worker config {config}: 2 invalid key(s)",
        "  offset.flush.interval.ms: Input should be a valid integer, unable to parse string as "
        "an integer (got 'abc')",
        "  task.shutdown.graceful.timeout.ms: Input should be greater than or equal to 0 "
        "(got '-1')",
    ]


def test_connect_overrides_beat_the_config_file_and_are_validated(tmp_path: Path) -> None:
    """``--override KEY=VALUE`` wins over the file (its bad value is reported as the file's
    are), and an argument that is not KEY=VALUE is refused before anything starts."""
    config = tmp_path / "worker.properties"
    config.write_text("offset.flush.interval.ms=1000\n")
    port = str(free_port())
    done = _sluice(
        "connect", "--bootstrap", "127.0.0.1:9", "--config", str(config), "--rest-port", port,
        "--override", "offset.flush.interval.ms=abc", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines()[:2] == [
        f"error: worker config {config}: 1 invalid key(s)",
        "  offset.flush.interval.ms: Input should be a valid integer, unable to parse string as "
        "an integer (got 'abc')",
    ]
    done = _sluice(
        "connect", "--bootstrap", "127.0.0.1:9", "--rest-port", port,
        "-o", "rest.advertised.host.name", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        "error: --override 'rest.advertised.host.name': expected KEY=VALUE"
    )


def test_connect_to_an_unreachable_cluster_says_so_in_one_line(tmp_path: Path) -> None:
    port = free_port()  # bound and closed: nobody listens there
    done = _sluice(
        "connect", "--bootstrap", f"127.0.0.1:{port}", "--rest-port", str(free_port()),
        "--data-dir", str(tmp_path / "data"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) <= 2, done.stderr  # (the first start also says where its token is)
    problems = [line for line in lines if " info " not in line]
    assert len(problems) == 1, done.stderr
    assert " error sluice.node cannot reach the Kafka cluster at 127.0.0.1:" in problems[0]
    assert "check bootstrap.servers" in problems[0]


def test_sigint_stop_of_a_busy_up_logs_no_errors(hub_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    hub = hub_factory()
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(1000)))
    sink = tmp_path / "out.txt"
    for name, config in {
        "src": {"connector.class": "FileStreamSource", "file": str(source), "topic": "lines"},
        "dst": {"connector.class": "FileStreamSink", "file": str(sink), "topics": "lines"},
    }.items():
        status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
        assert status == 201, body
    wait_until(lambda: sink.exists() and sink.read_text().count("\n") >= 1000, 60, "the sink")
    assert hub.proc is not None
    hub.proc.send_signal(signal.SIGINT)
    assert hub.proc.wait(60) == 0
    hub.proc = None
    log = hub.log(since_start=True)
    assert "broker stopped" in log
    # librdkafka's own lines are "%<syslog level>|...": errors and warnings (0-4) must not
    # appear; a notice (%6) it prints while a client is destroyed, after Python's log
    # forwarding has ended ("Purging 1 unserved events from background queue"), may.
    bad = [line for line in log.splitlines()
           if " error " in line or re.match(r"%[0-4]\|", line)]  # fmt: skip
    assert bad == [], json.dumps(bad, indent=1)
