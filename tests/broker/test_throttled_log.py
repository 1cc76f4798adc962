"""ThrottledLog: the first event per kind in full, the rest as one summary per interval."""

from __future__ import annotations

import logging

import pytest

from sluice.throttled_log import ThrottledLog


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_first_event_in_full_then_one_summary_with_counts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    throttled = ThrottledLog(logging.getLogger("t"), "client errors", interval_s=60, clock=clock)
    with caplog.at_level(logging.WARNING, logger="t"):
        for i in range(500):
            throttled.event("malformed request", "malformed request", peer=f"10.0.0.{i % 9}:1")
        for _ in range(20):
            throttled.event("frame size out of bounds", "frame size out of bounds", peer="x:2")
        assert len(caplog.records) == 2  # one line per kind so far
        assert throttled.suppressed == 499 + 19
        throttled.flush()  # the interval is not over: nothing yet
        assert len(caplog.records) == 2
        clock.now += 61
        throttled.flush()
    summary = caplog.records[-1]
    assert len(caplog.records) == 3
    assert summary.getMessage() == "client errors suppressed in the last 61s"
    assert summary.total == 518  # type: ignore[attr-defined]
    assert summary.counts == "malformed request=499, frame size out of bounds=19"  # type: ignore[attr-defined]
    assert summary.last_peer == "x:2"  # type: ignore[attr-defined]
    # A new interval starts fresh: the next event of a kind is logged in full again.
    with caplog.at_level(logging.WARNING, logger="t"):
        assert throttled.event("malformed request", "malformed request", peer="y:3")
    assert throttled.suppressed == 0


def test_no_summary_when_nothing_was_suppressed(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    throttled = ThrottledLog(logging.getLogger("t2"), "errors", interval_s=1, clock=clock)
    with caplog.at_level(logging.WARNING, logger="t2"):
        throttled.event("a", "a happened")
        clock.now += 5
        throttled.flush()
    assert [r.getMessage() for r in caplog.records] == ["a happened"]


def test_new_kinds_beyond_the_cap_are_only_counted(caplog: pytest.LogCaptureFixture) -> None:
    throttled = ThrottledLog(logging.getLogger("t3"), "errors", max_keys=3, clock=FakeClock())
    with caplog.at_level(logging.WARNING, logger="t3"):
        for i in range(50):
            throttled.event(f"kind {i}", f"kind {i}")
    assert len(caplog.records) == 3 and throttled.suppressed == 47
