"""Measuring clients against their quotas and computing how long to throttle them.

Kafka's model (``ClientQuotaManager``, KIP-13/KIP-124): each (quota kind, user, client id)
has a rate sensor over ``quota.window.num`` windows of ``quota.window.size.seconds``; the
rate is what was recorded in the live windows over the time they span (at least
``num - 1`` windows, so a client's first burst is not measured over a few milliseconds).
When the rate is above the quota, the throttle time is the pause after which the average over
the span falls back to the quota: ``(rate - quota) / quota * span``, capped at the full span.
The broker puts it in the response's ``throttle_time_ms`` and stops reading from the
connection for that long (it "mutes the channel"), so even a client that ignores the field is
held to its quota.

``request_percentage`` measures handler time (the event loop's time spent on the client's
requests) as a percentage of wall time, the same way.

Event-loop only (no locks). With no quota configured the cost per request is one truth test.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from broker.security.quota import (
    CONSUMER_BYTE_RATE,
    PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
    ClientQuotas,
)

_IDLE_SENSOR_S = 3600.0  # sensors of clients silent this long are dropped (Kafka: 1 hour)


@dataclass
class _Rate:
    """Amounts recorded per window: deque of [window start, amount]."""

    windows: deque[list[float]] = field(default_factory=deque)
    last: float = 0.0

    def record(self, amount: float, now: float, size: float, num: int) -> None:
        self.last = now
        if not self.windows or now >= self.windows[-1][0] + size:
            self.windows.append([now, 0.0])
        self.windows[-1][1] += amount
        while self.windows and self.windows[0][0] <= now - size * num:
            self.windows.popleft()

    def rate(self, now: float, size: float, num: int) -> tuple[float, float]:
        """(amount per second, span in seconds)."""
        total = sum(amount for _, amount in self.windows)
        span = now - self.windows[0][0] if self.windows else 0.0
        span = max(span, size * (num - 1), size)
        return total / span, span


class QuotaManager:
    """Records what each client did and answers with the throttle time it earned."""

    def __init__(self, quotas: ClientQuotas, window_num: int = 11, window_size_s: float = 1.0):
        if window_num < 1 or window_size_s <= 0:
            raise ValueError("quota.window.num and quota.window.size.seconds must be positive")
        self.quotas = quotas
        self.window_num = window_num
        self.window_size_s = window_size_s
        self._sensors: dict[tuple[str, str, str], _Rate] = {}
        self._last_sweep = time.monotonic()

    def record(self, key: str, user: str, client_id: str, amount: float) -> int:
        """Records ``amount`` (bytes, or handler seconds for request_percentage); returns the
        throttle time in ms (0 when the client is within its quota or has none)."""
        if not self.quotas:
            return 0
        bound = self.quotas.limit(key, user, client_id)
        if bound is None:
            return 0
        if key == REQUEST_PERCENTAGE:
            bound = bound / 100.0  # percent of one handler -> handler seconds per second
        now = time.monotonic()
        sensor = self._sensors.get((key, user, client_id))
        if sensor is None:
            sensor = self._sensors[(key, user, client_id)] = _Rate()
            self._sweep(now)
        size, num = self.window_size_s, self.window_num
        sensor.record(amount, now, size, num)
        rate, span = sensor.rate(now, size, num)
        if rate <= bound:
            return 0
        throttle_s = min((rate - bound) / bound * span, size * num)
        return int(throttle_s * 1000)

    def produce(self, user: str, client_id: str, nbytes: int) -> int:
        return self.record(PRODUCER_BYTE_RATE, user, client_id, nbytes)

    def fetch(self, user: str, client_id: str, nbytes: int) -> int:
        return self.record(CONSUMER_BYTE_RATE, user, client_id, nbytes)

    def _sweep(self, now: float) -> None:
        if now - self._last_sweep < 60:
            return
        self._last_sweep = now
        for key in [k for k, s in self._sensors.items() if now - s.last > _IDLE_SENSOR_S]:
            del self._sensors[key]


def with_throttle(response: Any, throttle_ms: int) -> Any:
    """The response with ``throttle_time_ms`` set, for the APIs whose schema has the field."""
    names = {f.name for f in dataclasses.fields(response)}
    if "throttle_time" not in names:
        return response
    return dataclasses.replace(response, throttle_time=timedelta(milliseconds=throttle_ms))
