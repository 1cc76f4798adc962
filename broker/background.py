"""Failure isolation for the broker's background work (flush, retention, cleaner, group expiry).

Background passes walk many units (partitions, groups). One unit that keeps failing, a
partition whose batches cannot be decoded, a directory that went read-only, must not stop the
pass for the others, and must not write a traceback every second. ``FailureTracker`` is the
bookkeeping each pass uses around every unit::

    if tracker.due(key, now):
        try:
            work(unit)
        except Exception as exc:
            tracker.failed(key, exc, now)
        else:
            tracker.succeeded(key)

A failing unit is skipped until its next retry time, which follows a fixed schedule of delays
(``schedule_ms``: the n-th consecutive failure waits ``schedule_ms[n-1]``, the last delay
repeating). The first failure is logged at ERROR with the traceback and the unit's name; each
retry that fails again is one WARNING line (so the schedule also rate-limits the log); the
first success after failures is one INFO line. ``failures()`` is the state a metrics endpoint
or status command reads: like Kafka's LogCleaner keeps its *uncleanable partitions*.

Thread safety: one lock; a tracker is used by one background thread (or the event loop) and
read from anywhere.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskFailure:
    """One unit (partition, group) whose background work is failing."""

    task: str
    """The work that fails: ``log-cleaner``, ``log-flush``, ``log-retention``, ..."""
    key: str
    """The unit's name, e.g. ``orders-3`` or a group id."""
    error: str
    """The last error, ``Type: message``."""
    failures: int
    """Consecutive failures so far."""
    first_failed_ms: int
    last_failed_ms: int
    next_retry_ms: int


class FailureTracker:
    """Per-unit failure state and retry schedule of one kind of background work."""

    def __init__(
        self,
        task: str,
        schedule_ms: Sequence[int],
        *,
        logger: logging.Logger = log,
        unit: str = "partition",
    ) -> None:
        if not schedule_ms:
            raise ValueError("a retry schedule needs at least one delay")
        self.task = task
        self.unit = unit
        self._schedule = tuple(schedule_ms)
        self._log = logger
        self._lock = threading.Lock()
        self._failing: dict[str, TaskFailure] = {}

    def due(self, key: str, now_ms: int) -> bool:
        """True unless ``key`` failed and its next retry time has not come yet."""
        failure = self._failing.get(key)  # a dict read is atomic; no lock on the common path
        return failure is None or now_ms >= failure.next_retry_ms

    def run(self, key: str, now_ms: int, work: Callable[[], int]) -> int:
        """Runs ``work`` for ``key`` if due, recording the outcome; returns its result or 0."""
        if not self.due(key, now_ms):
            return 0
        try:
            result = work()
        except Exception as exc:  # isolation is the point: any failure stays with its unit
            self.failed(key, exc, now_ms)
            return 0
        self.succeeded(key)
        return result

    def failed(self, key: str, exc: BaseException, now_ms: int) -> TaskFailure:
        with self._lock:
            previous = self._failing.get(key)
            count = 1 if previous is None else previous.failures + 1
            delay = self._schedule[min(count, len(self._schedule)) - 1]
            failure = TaskFailure(
                task=self.task,
                key=key,
                error=f"{type(exc).__name__}: {exc}",
                failures=count,
                first_failed_ms=now_ms if previous is None else previous.first_failed_ms,
                last_failed_ms=now_ms,
                next_retry_ms=now_ms + delay,
            )
            self._failing[key] = failure
        fields = {
            "task": self.task,
            self.unit: key,
            "failures": count,
            "retry_in_s": delay / 1000,
            "error": failure.error,
        }
        if previous is None:
            self._log.error(
                f"{self.task} failed for {self.unit} {key}; the others continue, this one is "
                "retried later",
                extra=fields,
                exc_info=exc,
            )
        else:
            self._log.warning(f"{self.task} still failing for {self.unit} {key}", extra=fields)
        return failure

    def succeeded(self, key: str) -> None:
        if key not in self._failing:
            return
        with self._lock:
            previous = self._failing.pop(key, None)
        if previous is not None:
            self._log.info(
                f"{self.task} recovered for {self.unit} {key}",
                extra={"task": self.task, self.unit: key, "failures": previous.failures},
            )

    def retain(self, keys: Iterable[str]) -> None:
        """Forgets units that no longer exist (a deleted topic, a removed group)."""
        alive = set(keys)
        with self._lock:
            for key in [k for k in self._failing if k not in alive]:
                del self._failing[key]

    def failures(self) -> list[TaskFailure]:
        """The units failing right now, by name."""
        with self._lock:
            return sorted(self._failing.values(), key=lambda f: f.key)

    def __contains__(self, key: object) -> bool:
        return key in self._failing
