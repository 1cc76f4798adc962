"""File connectors touch only paths under ``file.allowed.paths``: /etc/shadow, ``..`` and
symlinks are refused at validation (through the REST API of a real worker) and at open time
(a symlink swapped in after validation), and nothing outside a root is read or written."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from connectors.file.sink_task import FileSinkTask
from hub.api import ConfigError, SinkRecord, TopicPartition
from hub.api.paths import PathNotAllowedError
from tests.connectors.file.conftest import OffsetStore, SinkContext, SourceContext
from tests.fixtures.broker import BrokerProcess
from tests.hub.rest.conftest import real_herder_client
from tests.hub.rest.test_connectors import assert_error

SECRET = "root:$6$not-for-topics"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """(root, outside): the allowed directory and a sibling holding a secret file."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "shadow").write_text(SECRET + "\n")
    (root / "ok.log").write_text("fine\n")
    return root, outside


@pytest.fixture
def api(broker: BrokerProcess, layout: tuple[Path, Path]) -> Iterator[TestClient]:
    root, _ = layout
    with real_herder_client(
        broker.bootstrap, "paths", **{"file.allowed.paths": str(root)}
    ) as client:
        yield client


def source(file: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSource", "file": file, "topic": uuid.uuid4().hex[:8]}


def sink(file: str) -> dict[str, str]:
    return {"connector.class": "FileStreamSink", "file": file, "topics": "t"}


def refused(api: TestClient, config: dict[str, str], key: str = "file") -> None:
    response = api.post("/connectors", json={"name": f"c-{uuid.uuid4().hex[:6]}", "config": config})
    body = assert_error(response, 400, fields=(key,))
    assert "file.allowed.paths" in " ".join(body["errors"][key])
    plugin = config["connector.class"]
    validated = api.put(f"/connector-plugins/{plugin}/config/validate", json=config).json()
    assert validated["error_count"] >= 1


def test_paths_outside_the_roots_refused_through_the_api(
    api: TestClient, layout: tuple[Path, Path]
) -> None:
    root, outside = layout
    (root / "link").symlink_to(outside / "shadow")
    (root / "dirlink").symlink_to(outside)
    for config in (
        source("/etc/shadow"),
        source(str(root / ".." / "outside" / "shadow")),  # .. escapes
        source(str(root / "link")),  # a symlink out of the root
        source(str(root / "dirlink" / "shadow")),  # a directory symlink out
        source("/etc/*"),  # a glob rooted elsewhere
        source(str(root / ".." / "*" / "shadow")),
        sink("/etc/cron.d/sluice"),
        sink(str(root / ".." / "outside" / "written")),
        sink(str(root / "dirlink" / "written")),
    ):
        refused(api, config)
    refused(api, {**source(str(root / "ok.log")), "files": "/etc/passwd"}, key="files[0]")
    for url in ("sqlite:////etc/cron.d/sluice.db", f"jdbc:sqlite:{root}/../outside/w.db"):
        warehouse = {"connector.class": "warehouse-sink", "topics": "t", "connection.url": url}
        refused(api, warehouse, key="connection.url")  # a SQLite file is a file too
    assert not (outside / "written").exists()
    assert api.get("/connectors").json() == []


def test_paths_inside_the_roots_accepted(api: TestClient, layout: tuple[Path, Path]) -> None:
    root, _ = layout
    (root / "inner").symlink_to(root / "ok.log")  # a symlink that stays inside is fine
    for i, config in enumerate(
        (
            source(str(root / "ok.log")),
            source(str(root / "inner")),
            source(str(root / "logs" / "**" / "*.log")),
            sink(str(root / "out" / ".." / "out.txt")),
        )
    ):
        response = api.post("/connectors", json={"name": f"ok-{i}", "config": config})
        assert response.status_code == 201, response.text


# -- at start and at open time: symlinks swapped in after validation -------------------------------
def test_source_refuses_a_file_swapped_for_a_symlink_while_tailing(
    layout: tuple[Path, Path], allowed_roots: Any
) -> None:
    from connectors.file.source_task import FileSourceTask

    root, outside = layout
    allowed_roots(root)
    log = root / "app.log"
    log.write_text("first\n")
    config = {"name": "s", "topic": "t", "file": str(log), "poll.interval.ms": "0"}
    task = FileSourceTask(SourceContext(OffsetStore(), config), wait=lambda s: None)
    task.start(config)
    seen = [r.value for r in task.poll() or []]
    assert seen == ["first"]
    log.unlink()
    log.symlink_to(outside / "shadow")  # "rotated": the path now leads out of the root
    with pytest.raises(PathNotAllowedError, match=r"file\.allowed\.paths"):
        for _ in range(10):
            seen += [r.value for r in task.poll() or []]
    assert SECRET not in " ".join(map(str, seen))
    task.stop()
    # a restart validates the config again: refused before anything is opened
    again = FileSourceTask(SourceContext(OffsetStore(), config), wait=lambda s: None)
    with pytest.raises(ConfigError) as caught:
        again.start(config)
    assert "file.allowed.paths" in str(caught.value.errors["file"])


def test_sink_refuses_a_target_swapped_for_a_symlink(
    layout: tuple[Path, Path], allowed_roots: Any
) -> None:
    root, outside = layout
    allowed_roots(root)
    target = root / "out.txt"
    config = {"name": "k", "topics": "t", "file": str(target)}
    target.symlink_to(outside / "cron")  # planted after the config was accepted
    with pytest.raises(ConfigError) as caught:
        FileSinkTask(SinkContext(config)).start(config)
    assert "file.allowed.paths" in str(caught.value.errors["file"])
    assert not (outside / "cron").exists()


def test_sink_refuses_a_directory_swapped_for_a_symlink_while_running(
    layout: tuple[Path, Path], allowed_roots: Any
) -> None:
    root, outside = layout
    allowed_roots(root)
    (root / "sub").mkdir()
    config = {"name": "k", "topics": "t", "file": str(root / "sub" / "out.txt")}
    task = FileSinkTask(SinkContext(config))
    task.start(config)  # accepted and opened inside the root
    task.open([TopicPartition("t", 0)])
    (root / "sub").rename(root / "sub.old")
    (root / "sub").symlink_to(outside)  # the sink's next file (its state) would land outside
    task.put([SinkRecord(topic="t", partition=0, offset=0, value="inside")])
    with pytest.raises(PathNotAllowedError):
        task.flush({})
    assert sorted(p.name for p in outside.iterdir()) == ["shadow"]


def test_open_checks_what_it_opened_not_what_the_path_said(
    layout: tuple[Path, Path], allowed_roots: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: the path resolved inside the root, then a directory became a symlink out
    before the open. The directory descriptor's real path (/proc/self/fd) gives it away."""
    from hub.api import paths

    root, outside = layout
    allowed_roots(root)
    (root / "dir").symlink_to(outside)
    monkeypatch.setattr(paths.os.path, "realpath", lambda p: os.path.abspath(p))  # stale answer
    with pytest.raises(PathNotAllowedError):
        paths.open_checked(str(root / "dir" / "shadow"), os.O_RDONLY)
    with pytest.raises(PathNotAllowedError):
        paths.open_checked(str(root / "dir" / "new"), os.O_WRONLY | os.O_CREAT)
    assert not (outside / "new").exists()
    (root / "last").symlink_to(outside / "shadow")
    with pytest.raises(PathNotAllowedError):  # O_NOFOLLOW on the last component
        paths.open_checked(str(root / "last"), os.O_RDONLY)


def test_unrestricted_without_a_worker(tmp_path: Path) -> None:
    """No worker in the process (a plugin's own test, a CLI typed by a user): no roots."""
    from hub.api import paths

    assert paths.allowed_roots() is None
    assert paths.check_path("/etc/hostname") == "/etc/hostname"
