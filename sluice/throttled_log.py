"""Rate-limited logging for events that a client (or a bad partition) can repeat at will.

A misbehaving client can open thousands of connections a second, each sending garbage; one
WARNING line per connection would flood the log and hide everything else. ``ThrottledLog``
logs the *first* event of each kind (its key) in an interval with all its details, counts the
rest, and when the interval is over writes one summary line with the count per kind and the
last example's fields::

    warning ... client errors suppressed in the last 60s interval_s=60 total=1999
        counts='malformed request=1500, frame size out of bounds=499' last_peer=10.0.0.7:51234

So a single bad connection still gets its full line at once, and a flood costs two lines a
minute. At most ``max_keys`` kinds are logged in full per interval; beyond that (a client
inventing new kinds) every event is only counted. The summary is written by the next event
after the interval, or by ``flush()``, which the owner calls from its periodic housekeeping so
that a burst that stopped is still reported.

Thread safety: one lock; events come from the event loop and from background threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable


class ThrottledLog:
    """First event per key per interval in full, the rest as one summary line."""

    def __init__(
        self,
        logger: logging.Logger,
        what: str,
        *,
        interval_s: float = 60.0,
        level: int = logging.WARNING,
        max_keys: int = 100,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = logger
        self._what = what
        self._interval = interval_s
        self._level = level
        self._max_keys = max_keys
        self._clock = clock
        self._lock = threading.Lock()
        self._window_start = clock()
        self._logged: set[str] = set()
        self._suppressed: Counter[str] = Counter()
        self._last: dict[str, object] = {}

    def event(self, key: str, message: str, **fields: object) -> bool:
        """Records one event; returns True if it was logged in full (first of its interval)."""
        with self._lock:
            summary = self._roll_locked()
            first = key not in self._logged and len(self._logged) < self._max_keys
            if first:
                self._logged.add(key)
            else:
                self._suppressed[key] += 1
                self._last = fields
        if summary is not None:
            self._emit(summary)
        if first:
            self._log.log(self._level, message, extra=fields)
        return first

    def flush(self) -> None:
        """Writes the summary if the interval is over (call periodically)."""
        with self._lock:
            summary = self._roll_locked()
        if summary is not None:
            self._emit(summary)

    @property
    def suppressed(self) -> int:
        """Events counted but not logged in the current interval."""
        with self._lock:
            return sum(self._suppressed.values())

    def _roll_locked(self) -> tuple[Counter[str], dict[str, object], float] | None:
        now = self._clock()
        elapsed = now - self._window_start
        if elapsed < self._interval:
            return None
        counts, last = self._suppressed, self._last
        self._window_start = now
        self._logged = set()
        self._suppressed = Counter()
        self._last = {}
        return (counts, last, elapsed) if counts else None

    def _emit(self, summary: tuple[Counter[str], dict[str, object], float]) -> None:
        counts, last, elapsed = summary
        fields: dict[str, object] = {
            "interval_s": round(elapsed),
            "total": sum(counts.values()),
            "counts": ", ".join(f"{key}={n}" for key, n in counts.most_common()),
        }
        fields.update({f"last_{k}": v for k, v in last.items()})
        self._log.log(
            self._level, f"{self._what} suppressed in the last {round(elapsed)}s", extra=fields
        )
