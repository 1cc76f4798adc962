"""Failure state of one piece of the hub's background work: a store reader, status writes, one
task's offset commits.

Background work repeats forever; when it starts failing (the broker is away, a record is
poisoned) it must neither die silently nor flood the log, and it must not take anything else
with it. ``LoopHealth`` is the bookkeeping each loop keeps around its unit of work::

    try:
        step()
    except Exception as exc:
        stopping.wait(health.failed(exc))   # the delay before the next attempt
    else:
        health.succeeded()

The first failure is logged at ERROR with its traceback and the loop's name (connector, task,
topic); failures after it are one WARNING line per interval at most (``ThrottledLog``), and
the first success after failures is one INFO line. The delay grows exponentially with
consecutive failures (tenacity's ``wait_exponential``, 0.1 s doubling up to ``max_delay_s``).
``failure`` is what the status and health answers show while it lasts.

Thread safety: one lock; a loop calls ``failed``/``succeeded`` from its own thread, any thread
may read ``failure``.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from tenacity import wait_exponential

from hub.runtime.retry import delay_for
from sluice.throttled_log import ThrottledLog

INITIAL_DELAY_S = 0.1
MAX_DELAY_S = 10.0
LOG_INTERVAL_S = 60.0


@dataclass(frozen=True)
class Failure:
    """A background loop that is failing right now."""

    work: str  # e.g. "offset commit", "reading sluice-connect-configs"
    error: str  # ``Type: message`` of the last failure
    failures: int  # consecutive failures so far
    since_ms: int  # wall-clock time of the first of them

    def describe(self) -> str:
        return f"{self.work} failing ({self.failures}x since {self.since_ms} ms): {self.error}"


class LoopHealth:
    """Consecutive failures of one loop, their log lines and the retry delay."""

    def __init__(
        self,
        work: str,
        logger: logging.Logger,
        fields: dict[str, Any] | None = None,
        *,
        max_delay_s: float = MAX_DELAY_S,
        log_interval_s: float = LOG_INTERVAL_S,
    ) -> None:
        self.work = work
        self._log = logger
        self._fields = dict(fields or {})
        self._wait = wait_exponential(multiplier=INITIAL_DELAY_S, max=max_delay_s)
        self._repeats = ThrottledLog(logger, f"{work} failures", interval_s=log_interval_s)
        self._lock = threading.Lock()
        self._failure: Failure | None = None

    @property
    def failure(self) -> Failure | None:
        return self._failure

    def failed(self, exc: BaseException) -> float:
        """Records one failure and logs it (see the module docstring); returns the seconds to
        wait before the next attempt."""
        error = f"{type(exc).__name__}: {exc}"
        with self._lock:
            previous = self._failure
            count = 1 if previous is None else previous.failures + 1
            since = int(time.time() * 1000) if previous is None else previous.since_ms
            self._failure = Failure(self.work, error, count, since)
        delay = delay_for(self._wait, count)
        fields = {**self._fields, "failures": count, "retry_in_s": round(delay, 2)}
        if previous is None:
            self._log.error(
                f"{self.work} failed; retrying with backoff, nothing else is affected",
                extra={**fields, "error": error},
                exc_info=exc,
            )
        else:
            self._repeats.event(self.work, f"{self.work} still failing", error=error, **fields)
        return delay

    def succeeded(self) -> None:
        if self._failure is None:
            return
        with self._lock:
            previous, self._failure = self._failure, None
        if previous is not None:
            self._repeats.flush()
            self._log.info(
                f"{self.work} recovered", extra={**self._fields, "failures": previous.failures}
            )
