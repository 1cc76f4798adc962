"""What Kafka Connect's ``connect-worker-rebalance-metrics`` group reports, for one worker.

Written only by the membership thread (revoke starts a rebalance, an applied assignment ends
it) and read by ``GET /metrics`` scrapes; the fields are plain numbers, so a scrape reads a
consistent-enough view without a lock on the membership thread's path.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class RebalanceStats:
    """Counts and times of this worker's rebalances (Connect's attribute names in comments)."""

    completed: int = 0
    """completed-rebalances-total"""
    epoch: int = -1
    """epoch: the group generation of the assignment in force"""
    leader_url: str = ""
    """leader-name: the leader's advertised REST URL"""
    total_ms: float = 0.0
    max_ms: float = 0.0
    """rebalance-max-time-ms"""
    _started: float | None = None
    _last_completed: float | None = None

    def started(self) -> None:
        """A rebalance began (this worker revoked what it ran); repeated calls keep the first."""
        if self._started is None:
            self._started = time.monotonic()

    def completed_with(self, epoch: int, leader_url: str) -> None:
        """An assignment was applied: the rebalance that began at ``started`` is over."""
        now = time.monotonic()
        if self._started is not None:
            took = (now - self._started) * 1000
            self.total_ms += took
            self.max_ms = max(self.max_ms, took)
        self._started = None
        self._last_completed = now
        self.completed += 1
        self.epoch = epoch
        self.leader_url = leader_url

    @property
    def rebalancing(self) -> bool:
        """rebalancing: between a revoke and the next applied assignment."""
        return self._started is not None

    @property
    def avg_ms(self) -> float:
        """rebalance-avg-time-ms"""
        return self.total_ms / self.completed if self.completed else 0.0

    def since_last_ms(self) -> float:
        """time-since-last-rebalance-ms (-1 before the first, as Connect reports it)."""
        if self._last_completed is None:
            return -1.0
        return (time.monotonic() - self._last_completed) * 1000
