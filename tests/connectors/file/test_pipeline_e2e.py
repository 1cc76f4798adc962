"""End to end through the REST API of a real ``sluice up`` subprocess (broker + worker +
REST in one process): FileStreamSource -> topic -> FileStreamSink, configured exactly as
Kafka Connect's quickstart does.

The hub is killed with SIGKILL mid-flight and restarted: the source resends from its last
committed offset (at-least-once), and the sink drops those resends by the file.stream /
file.seq headers and truncates anything it wrote but never recorded, so the output equals the
input exactly.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

import hub.rest.app
from tests.fixtures.broker import wait_until

N = 100_000


@pytest.fixture
def hub(hub_factory: Callable[..., object]) -> object:
    """A private ``sluice up`` (tests/fixtures/hub.py) committing offsets often."""
    return hub_factory(**{"offset.flush.interval.ms": 500})


def append(path: Path, lines: list[str]) -> None:
    with open(path, "a") as f:
        f.write("".join(line + "\n" for line in lines))


def count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, "rb") as f:
        return f.read().count(b"\n")


def create_pipeline(hub: object, source: Path, sink: Path, topic: str) -> None:
    for name, config in (
        ("local-file-source", {"connector.class": "FileStreamSource", "tasks.max": "1",
                               "file": str(source), "topic": topic}),
        ("local-file-sink", {"connector.class": "FileStreamSink", "tasks.max": "1",
                             "file": str(sink), "topics": topic}),
    ):  # fmt: skip
        status, body = hub.request("POST", "/connectors", {"name": name, "config": config})  # type: ignore[attr-defined]
        assert status == 201, body


def settled(path: Path, expected: int, timeout: float = 180) -> list[str]:
    """Waits for ``expected`` lines, then checks no more (duplicates) arrive for a moment."""
    wait_until(lambda: count_lines(path) >= expected, timeout, f"{expected} lines in {path}")
    time.sleep(2)  # an e2e test of a separate process: give late duplicates a chance to show
    return path.read_text().splitlines()


def committed_position(hub: object) -> int:
    """The file source's committed byte position (0 before its first offset commit)."""
    _, body = hub.request("GET", "/connectors/local-file-source/offsets")  # type: ignore[attr-defined]
    return max((int(o["offset"].get("position", 0)) for o in (body or {}).get("offsets", [])),
               default=0)  # fmt: skip


def test_100k_lines_exactly_once_across_kill_9(hub, tmp_path: Path) -> None:
    source, sink = tmp_path / "test.txt", tmp_path / "test.sink.txt"
    topic = f"connect-test-{uuid.uuid4().hex[:8]}"
    written = [f"{i:06d} {'x' * 40}" for i in range(N)]
    append(source, written[: N // 2])
    create_pipeline(hub, source, sink, topic)
    wait_until(lambda: count_lines(sink) >= N // 5, 120, "the pipeline to be mid-flight")
    # The source must have committed an offset before the kill: the file is rotated while the
    # hub is down, and a source with no committed offset cannot know the old file (it starts
    # the new one from byte 0, as Kafka Connect's would). The source reads all 50k lines well
    # within one offset flush interval, so the sink's progress alone does not imply a commit.
    wait_until(lambda: committed_position(hub) > 0, 60, "a committed source offset")
    hub.kill()
    # while the hub is down: more lines, then a rotation the source must notice on restart
    append(source, written[N // 2 : 3 * N // 4])
    os.rename(source, tmp_path / "test.txt.1")
    append(source, written[3 * N // 4 :])
    hub.start()
    got = settled(sink, N)
    assert len(got) == N
    assert got == written


def test_rotation_while_tailing(hub, tmp_path: Path) -> None:
    source, sink = tmp_path / "app.log", tmp_path / "app.sink.log"
    topic = f"rotate-{uuid.uuid4().hex[:8]}"
    source.touch()
    create_pipeline(hub, source, sink, topic)
    written: list[str] = []
    for rotation in range(5):
        batch = [f"r{rotation}-{i}" for i in range(2000)]
        append(source, batch)
        written += batch
        target = len(written) - 500  # the last lines may still be in flight
        wait_until(lambda t=target: count_lines(sink) >= t, 120, "tailing to keep up")
        rotated = tmp_path / f"app.log.{rotation}"
        os.rename(source, rotated)
        append(rotated, [f"late-{rotation}"])  # the writer has not reopened yet
        written.append(f"late-{rotation}")
        source.touch()
    assert settled(sink, len(written)) == written
