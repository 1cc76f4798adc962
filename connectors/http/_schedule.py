"""When the next poll starts: a fixed interval or a crontab.

Why not an apscheduler *scheduler*: a source task already has a thread that the worker calls
``poll()`` on, and every request, page and offset of a poll must stay on that thread in order.
A scheduler would add a second thread whose jobs could only hand a "go" signal to ``poll``; so
the task keeps the due time itself and uses apscheduler only for what it is good at, computing
the next fire time of a cron expression (``CronTrigger``). Interval polls are fixed-rate (next
start = previous start + interval); a poll that overruns its slot starts the next one at once,
never several back to back.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime


class Schedule:
    def __init__(self, interval_ms: int, cron: str | None) -> None:
        self.interval_s = interval_ms / 1000
        self.trigger = None
        if cron:
            from apscheduler.triggers.cron import CronTrigger

            self.trigger = CronTrigger.from_crontab(cron, timezone="UTC")

    def first(self, now: float) -> float:
        """Interval polls start at once; cron polls at the next fire time."""
        return now if self.trigger is None else self._next_cron(None)

    def after(self, started: float, now: float) -> float:
        """Due time of the poll after one that started at ``started`` (monotonic seconds)."""
        if self.trigger is None:
            return max(now, started + self.interval_s)
        return self._next_cron(started)

    def _next_cron(self, previous: float | None) -> float:
        assert self.trigger is not None
        wall_now = datetime.now(UTC)
        fire = self.trigger.get_next_fire_time(None, wall_now)
        if fire is None:
            return float("inf")
        # Convert the wall-clock fire time into the monotonic clock the task waits on.
        return time.monotonic() + max(0.0, (fire - wall_now).total_seconds())
