"""A connector's periodic admin work (topic refresh, config sync, group refresh) on one thread.

MirrorMaker 2's ``Scheduler``: jobs of one connector run one at a time on a single thread
(apscheduler's ``BackgroundScheduler`` with a one-thread pool; a job still running when it is
due again is not started twice), a failing run is logged and the job keeps its schedule. A job
whose last run failed runs again after ``retry_seconds`` rather than a whole interval (a
cluster that was down at start must not leave the mirror idle for ten minutes).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler

log = logging.getLogger(__name__)
# apscheduler logs every job run at INFO; these jobs run every few seconds in tests and every
# few minutes in production, and report their own failures, so its messages stay at WARNING.
_quiet = logging.getLogger(f"{__name__}.apscheduler")
_quiet.setLevel(logging.WARNING)


class _Executor(ThreadPoolExecutor):
    def start(self, scheduler: Any, alias: str) -> None:
        super().start(scheduler, alias)
        self._logger = _quiet


class Scheduler:
    def __init__(self, label: str, retry_seconds: float = 5.0) -> None:
        self.label = label
        self.retry_seconds = retry_seconds
        self._scheduler = BackgroundScheduler(
            executors={"default": _Executor(1)},
            logger=_quiet,
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
            timezone="UTC",
        )
        self._lock = threading.Lock()
        self._scheduler.start()

    def every(self, seconds: float, job: Callable[[], Any], what: str, *, now: bool) -> None:
        """Runs ``job`` every ``seconds`` (first run at once with ``now``); negative: never."""
        if seconds < 0:
            return
        start = datetime.now().astimezone() + (timedelta() if now else timedelta(seconds=seconds))
        self._scheduler.add_job(
            self._run,
            "interval",
            seconds=seconds,
            next_run_time=start,
            args=(job, what),
            id=what,
            replace_existing=True,
        )

    def _run(self, job: Callable[[], Any], what: str) -> None:
        try:
            job()
        except Exception as exc:
            log.warning(
                "mirror job failed; retrying soon",
                extra={"connector": self.label, "job": what, "error": str(exc)},
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            retry = datetime.now().astimezone() + timedelta(seconds=self.retry_seconds)
            with self._lock:
                scheduled = self._scheduler.get_job(what)
                if scheduled is not None and scheduled.next_run_time > retry:
                    scheduled.modify(next_run_time=retry)

    def stop(self) -> None:
        """Waits for a running job (its admin calls are bounded by admin.timeout.ms)."""
        if self._scheduler.running:
            self._scheduler.shutdown(wait=True)
