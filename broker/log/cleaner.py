"""LogCleaner: log compaction (placeholder until the full cleaner lands)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker.log.partition_log import Clock, wall_clock_ms

if TYPE_CHECKING:
    from broker.log.partition_log import PartitionLog


class LogCleaner:
    def __init__(self, clock: Clock = wall_clock_ms) -> None:
        self.clock = clock

    def clean(self, plog: PartitionLog, now_ms: int | None = None) -> int:
        return 0
