"""One pipeline's trouble stays its own: an unreadable definitions file, one entry that cannot
be loaded, a bad saved schedule, a scheduled run that cannot start."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from apscheduler.schedulers.background import BackgroundScheduler

import spark_pipelines.templates as templates
from hub.pipelines import PipelinesService

CONFIG = {
    "input": {"bootstrap_servers": "127.0.0.1:9", "topics": ["raw"]},
    "checkpoint_dir": "/tmp/ck",
    "output_topic": "counts",
}


@pytest.fixture(autouse=True)
def _tmp_allowed(allowed_roots: Callable[..., None]) -> None:
    """The checkpoint directory above must be under ``file.allowed.paths`` (process-wide)."""
    allowed_roots("/tmp")


def _entry(name: str, **changes: object) -> dict[str, object]:
    return {
        "name": name, "template": "log_aggregation", "config": CONFIG, "schedule": None,
        "once": True, "master": "local[*]", "created": 1.0, **changes,
    }  # fmt: skip


def _service(home: Path, python: str | None = None) -> PipelinesService:
    scheduler = BackgroundScheduler(timezone="UTC")
    if python is None:
        return PipelinesService(home, templates, scheduler)
    return PipelinesService(home, templates, scheduler, python=python)


def test_an_unreadable_file_is_moved_aside_not_overwritten(tmp_path: Path) -> None:
    home = tmp_path / "pipelines"
    home.mkdir()
    (home / "pipelines.json").write_text('{"half": {"name": ')
    service = _service(home)
    assert service.pipelines == {}
    [aside] = home.glob("pipelines.json.unreadable-*")
    assert aside.read_text() == '{"half": {"name": '
    service.create("fresh", "log_aggregation", CONFIG)
    assert set(json.loads((home / "pipelines.json").read_text())) == {"fresh"}
    assert aside.exists()


def test_one_bad_entry_and_one_bad_schedule_leave_the_others_working(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "pipelines"
    home.mkdir()
    saved = {
        "good": _entry("good", schedule="0 3 * * *"),
        "broken": {"name": "broken", "template": "log_aggregation"},  # fields missing
        "odd-cron": _entry("odd-cron", schedule="every full moon"),
    }
    (home / "pipelines.json").write_text(json.dumps(saved))
    with caplog.at_level(logging.ERROR, logger="hub.pipelines.service"):
        service = _service(home)
    assert set(service.pipelines) == {"good", "odd-cron"}
    assert service.scheduler.get_job("good") is not None
    assert service.scheduler.get_job("odd-cron") is None
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "pipeline broken: definition cannot be loaded" in messages
    assert "pipeline odd-cron: schedule 'every full moon' not installed" in messages

    service.create("another", "log_aggregation", CONFIG)  # a save keeps what was not loaded
    assert json.loads((home / "pipelines.json").read_text())["broken"] == saved["broken"]


def test_a_scheduled_run_that_cannot_start_is_recorded_and_nothing_escapes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    service = _service(tmp_path / "pipelines", python=str(tmp_path / "no-such-python"))
    service.create("nightly", "log_aggregation", CONFIG, schedule="0 3 * * *")
    job = service.scheduler.get_job("nightly")
    with caplog.at_level(logging.ERROR, logger="hub.pipelines.service"):
        job.func(*job.args)  # what the scheduler's thread runs at 03:00; must not raise
    [run] = service.runs("nightly")
    assert run["state"] == "FAILED" and run["trigger"] == "schedule"
    assert run["error"].startswith("FileNotFoundError")
    assert "pipeline nightly: scheduled run could not start" in caplog.text
