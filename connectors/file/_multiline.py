"""Joining physical lines into events (a log line plus its stack trace) by a start pattern.

A line matching ``multiline.pattern`` starts a new event; any other line is appended to the
event before it. A line that does not match while no event is pending (the start of a file,
or the first line after a resume) starts an event of its own, so no line is ever dropped.
An event is complete when the next start line arrives, or after ``timeout`` seconds without
a new line (the last event of a quiet file), or when its file is finished (rotated away).

Every event keeps the byte range of its lines, so the source offset committed for it is the
position just after its last line and a restart re-reads a pending event whole.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Event(NamedTuple):
    start: int  # byte offset of the event's first line
    end: int  # byte offset just after the event's last newline
    text: str


class MultilineAssembler:
    """Not thread-safe: owned by one TailedFile, driven from the task's poll thread."""

    def __init__(self, pattern: str, timeout_s: float) -> None:
        self._pattern = re.compile(pattern)
        self._timeout_s = timeout_s
        self._lines: list[str] = []
        self._start = 0
        self._end = 0
        self._last_add = 0.0

    @property
    def pending(self) -> bool:
        return bool(self._lines)

    def add(self, start: int, end: int, text: str, now: float) -> Event | None:
        """Feeds one complete line; returns the event it completed, if any."""
        done = None
        if self._lines and self._pattern.search(text) is not None:
            done = self.flush()
        if not self._lines:
            self._start = start
        self._lines.append(text)
        self._end = end
        self._last_add = now
        return done

    def due(self, now: float) -> bool:
        """True when the pending event has waited ``timeout`` for a continuation line."""
        return bool(self._lines) and now - self._last_add >= self._timeout_s

    def flush(self) -> Event | None:
        """The pending event, now considered complete (None if there is none)."""
        if not self._lines:
            return None
        event = Event(self._start, self._end, "\n".join(self._lines))
        self._lines = []
        return event

    def reset(self) -> None:
        """Drops the pending event (its bytes vanished: the file was truncated)."""
        self._lines = []
