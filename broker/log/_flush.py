"""When a partition's data reaches the disk: ``flush`` (fsync), the ``flush.messages`` /
``flush.ms`` policy, and the high watermark that waits for it (``docs/storage.md``,
Durability). Kept apart from the append and read paths of ``PartitionLog``.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from broker.errors import StorageError
from broker.log import files
from broker.log._retention import write_offset_file

if TYPE_CHECKING:
    from broker.log.config import LogConfig
    from broker.log.segment import Segment


FLUSH_BUCKETS_MS: tuple[float, ...] = (1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 10_000)


class FlushTimes:
    """Kafka's ``LogFlushStats.LogFlushRateAndTimeMs``: how many fsyncing flushes ran and how
    long they took, as a histogram, across every partition of the process.

    Flushes run on executor and maintenance threads, and one fsync costs milliseconds, so a
    lock here costs nothing measurable; the metrics collector reads ``snapshot()``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets = [0] * (len(FLUSH_BUCKETS_MS) + 1)
        self._count = 0
        self._sum_ms = 0.0

    def record(self, elapsed_ms: float) -> None:
        with self._lock:
            self._count += 1
            self._sum_ms += elapsed_ms
            self._buckets[bisect_left(FLUSH_BUCKETS_MS, elapsed_ms)] += 1

    def snapshot(self) -> tuple[int, float, list[int]]:
        """(count, sum in ms, per-bucket counts, not cumulative)."""
        with self._lock:
            return self._count, self._sum_ms, list(self._buckets)


flush_times = FlushTimes()
"""The process's one ``FlushTimes`` (Kafka's metric is per broker JVM too)."""


class FlushMixin:
    # Provided by PartitionLog.
    _lock: threading.RLock
    _segments: tuple[Segment, ...]
    _hw: int
    _closed: bool
    _dirty: list[Segment]
    _unflushed_messages: int
    _last_flush_ms: int
    _recovery_point: int
    hw_follows_leo: bool
    config: LogConfig
    clock: Callable[[], int]
    directory: Path

    @property
    def log_end_offset(self) -> int:
        raise NotImplementedError

    def _storage_error(self, exc: OSError, action: str) -> StorageError:
        raise NotImplementedError

    def flush(self) -> None:
        """fsyncs every segment written since the last flush (blocks: call from an executor).

        Only the hand-over of buffered index entries takes the lock; the fsyncs themselves
        run without it, so appends from other producers continue meanwhile. What was appended
        before this call is durable when it returns.
        """
        with self._lock:
            dirty, self._dirty = self._dirty, []
            unflushed, self._unflushed_messages = self._unflushed_messages, 0
            for segment in dirty:
                segment.write_index_pending()
            end = self.log_end_offset
        started = time.perf_counter()
        try:
            for segment in dirty:
                segment.fsync()
        except OSError as exc:
            if self._closed:  # close() raced us and already flushed and closed the files
                return
            with self._lock:
                self._dirty = [*dirty, *(s for s in self._dirty if s not in dirty)]
                self._unflushed_messages += unflushed
            raise self._storage_error(exc, "flush") from exc
        if dirty:
            flush_times.record((time.perf_counter() - started) * 1000.0)
        self._last_flush_ms = self.clock()
        if self.hw_follows_leo and end > self._hw:
            with self._lock:
                self._hw = max(self._hw, min(end, self.log_end_offset))
        if dirty and end != self._recovery_point:
            # Not fsynced itself: a lost update only makes the next recovery scan more.
            write_offset_file(self.directory / files.RECOVERY_POINT_FILE, end, sync=False)
            self._recovery_point = end

    @property
    def flush_due(self) -> bool:
        """True once ``flush.messages`` records are unflushed.

        ``append`` never fsyncs (the asyncio server calls it inline); the produce path checks
        this and awaits ``flush()`` in an executor before acknowledging, so with
        ``flush.messages=1`` every acknowledged batch is on disk.
        """
        return self._unflushed_messages >= self.config.flush_messages

    def maybe_flush(self, now_ms: int) -> bool:
        """Background policy: flushes if ``flush.ms`` elapsed, ``flush.messages`` is due, or a
        segment was rolled since the last flush (as Kafka flushes a rolled segment
        asynchronously, which moves the recovery point past it)."""
        dirty = self._dirty
        rolled = bool(dirty) and dirty[0] is not self._segments[-1]  # Kafka flushes on roll
        if dirty and (
            rolled or self.flush_due or now_ms - self._last_flush_ms >= self.config.flush_ms
        ):
            self.flush()
            return True
        return False
