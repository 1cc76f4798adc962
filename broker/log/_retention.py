"""The parts of PartitionLog that remove data: retention, DeleteRecords, truncation, and the
cleaner's segment swap. Kept apart from the append/read paths to keep each file readable.

All of them run under the PartitionLog lock and publish a new ``_segments`` tuple; a removed
Segment is retired first, so a reader still holding it reads its (unlinked) inode if the
descriptor is open, or gets a retriable ``SegmentGoneError``, never another file's bytes (see
``segment`` and ``_handles``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from broker.errors import OffsetOutOfRangeError
from broker.log import files
from broker.log._atomic import fsync_dir, write_atomically

if TYPE_CHECKING:
    from broker.log.config import LogConfig
    from broker.log.producer_state import ProducerStateManager
    from broker.log.segment import Segment

log = logging.getLogger(__name__)


class RetentionMixin:
    # Provided by PartitionLog.
    _lock: threading.RLock
    _segments: tuple[Segment, ...]
    _log_start: int
    _hw: int
    _recovery_point: int
    _closed: bool
    _dirty: list[Segment]
    _producers: ProducerStateManager
    config: LogConfig
    clock: Callable[[], int]
    ident: str
    directory: Path

    def _set_segments(self, segments: tuple[Segment, ...]) -> None:
        raise NotImplementedError

    def _new_segment(self, base: int) -> Segment:
        raise NotImplementedError

    def _rebuild_producer_state(self) -> None:
        raise NotImplementedError

    def delete_old_segments(self, now_ms: int | None = None) -> int:
        """Applies retention.ms / retention.bytes (if cleanup.policy has ``delete``) and drops
        segments wholly below the log start offset. Never deletes the active segment.
        Returns how many segments were deleted."""
        with self._lock:
            now = self.clock() if now_ms is None else now_ms
            segments = list(self._segments)
            dead: list[Segment] = []
            while len(segments) > 1 and segments[1].base_offset <= self._log_start:
                dead.append(segments.pop(0))
            cfg = self.config
            if cfg.delete and cfg.retention_ms >= 0:
                while (
                    len(segments) > 1 and now - _largest_timestamp(segments[0]) > cfg.retention_ms
                ):
                    dead.append(segments.pop(0))
            if cfg.delete and cfg.retention_bytes >= 0:
                excess = sum(s.size for s in segments) - cfg.retention_bytes
                while len(segments) > 1 and excess >= segments[0].size:
                    excess -= segments[0].size
                    dead.append(segments.pop(0))
            if dead:
                self._drop(dead, segments, "retention")
            return len(dead)

    def delete_records_before(self, offset: int) -> int:
        """Moves the log start offset up to ``offset`` (DeleteRecords); returns the new start.

        ``offset`` may not pass the high watermark. Whole segments below the new start are
        deleted; the rest of the segment containing it stays on disk but is no longer served.
        """
        with self._lock:
            if offset > self._hw or offset < 0:
                raise OffsetOutOfRangeError(
                    f"cannot delete records before {offset} in {self.ident}: "
                    f"high watermark is {self._hw}"
                )
            if offset > self._log_start:
                self._log_start = offset
                write_log_start(self.directory, self._log_start)
                log.info("%s log start offset moved to %d", self.ident, offset)
                self.delete_old_segments()
            return self._log_start

    def truncate_to(self, offset: int) -> None:
        """Removes every batch whose last offset is >= ``offset`` (a follower's truncation).

        A batch straddling ``offset`` goes entirely, so the new log end offset is that batch's
        base offset (<= ``offset``). Truncating below the first segment empties the log and
        restarts it at ``offset``.
        """
        with self._lock:
            if offset >= self._segments[-1].next_offset:
                return
            segments = list(self._segments)
            if offset <= segments[0].base_offset:
                for segment in segments:
                    segment.delete()
                fresh = self._new_segment(offset)
                self._set_segments((fresh,))
                self._log_start = offset
                write_log_start(self.directory, self._log_start)
                self._dirty = [fresh]
            else:
                keep = [s for s in segments if s.base_offset < offset]
                dead = segments[len(keep) :]
                for segment in dead:
                    segment.delete()
                keep[-1].truncate_to(offset)
                self._set_segments(tuple(keep))
                self._dirty = [s for s in self._dirty if s not in dead]
                if keep[-1] not in self._dirty:
                    self._dirty.append(keep[-1])
            end = self._segments[-1].next_offset
            if self._log_start > end:
                self._log_start = end
                write_log_start(self.directory, self._log_start)
            self._hw = min(self._hw, end)
            if self._recovery_point > end:  # new data past ``end`` is not flushed yet
                self._recovery_point = end
                write_offset_file(self.directory / files.RECOVERY_POINT_FILE, end)
            self._producers.delete_snapshot()
            self._rebuild_producer_state()
            log.info("%s truncated to log end offset %d", self.ident, end)

    def swap_segment(self, old: Segment, build_dir: Path, expected_size: int) -> bool:
        """Replaces closed segment ``old`` with the cleaner's output in ``build_dir``.

        Crash safety: the files are first renamed to ``*.swap`` in the partition directory
        (the transaction index, if the cleaner wrote one, before the ``.log``), then the
        indexes replace theirs and the ``.log`` goes last. Recovery
        finishes any ``.log.swap`` and rebuilds its indexes, so every crash point leaves either
        the old or the new segment. Returns False (and changes nothing) if ``old`` was deleted,
        truncated or became active meanwhile, or the log was closed.
        """
        from broker.log.recovery import recover_segment

        with self._lock:
            segments = list(self._segments)
            if self._closed or old not in segments[:-1] or old.size != expected_size:
                return False
            base = old.base_offset
            names = files.segment_files(self.directory, base)
            built = files.segment_files(build_dir, base)
            swaps = [files.with_suffix(p, files.SWAP_SUFFIX) for p in names]
            txn_built = files.txn_index_file(build_dir, base)
            txn_final = files.txn_index_file(self.directory, base)
            txn_swap = files.with_suffix(txn_final, files.SWAP_SUFFIX)
            if txn_built.exists():  # before the .log.swap: recovery pairs them
                os.replace(txn_built, txn_swap)
            for src, swap in zip(built, swaps, strict=True):
                os.replace(src, swap)
            old.close_indexes()
            old.retire()  # its path is about to name the new file: never reopen it
            if txn_swap.exists():
                if txn_swap.stat().st_size:
                    os.replace(txn_swap, txn_final)
                else:
                    txn_final.unlink(missing_ok=True)
                    txn_swap.unlink()
            for swap, final in list(zip(swaps, names, strict=True))[::-1]:  # indexes, then log
                os.replace(swap, final)
            fsync_dir(self.directory)
            new = self._new_segment(base)
            recover_segment(new, self.ident)
            segments[segments.index(old)] = new
            self._set_segments(tuple(segments))
            self._dirty = [s for s in self._dirty if s is not old]
            log.info(
                "%s compacted segment %d: %d -> %d bytes", self.ident, base, expected_size, new.size
            )
            return True

    def _drop(self, dead: list[Segment], remaining: list[Segment], reason: str) -> None:
        self._set_segments(tuple(remaining))
        self._dirty = [s for s in self._dirty if s not in dead]
        for segment in dead:
            segment.delete()
            log.info(
                "%s deleted segment %d (offsets up to %d) by %s",
                self.ident, segment.base_offset, segment.next_offset - 1, reason,
            )  # fmt: skip
        start = max(self._log_start, remaining[0].base_offset)
        if start != self._log_start:
            self._log_start = start
            write_log_start(self.directory, self._log_start)
        self._hw = max(self._hw, self._log_start)


def read_offset_file(path: Path) -> int:
    """An offset kept in a one-line text file; 0 if missing or unreadable (safe default)."""
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return 0


def write_offset_file(path: Path, offset: int, *, sync: bool = True) -> None:
    write_atomically(path, f"{offset}\n".encode(), sync=sync)


def read_log_start(directory: Path) -> int:
    """The persisted log start offset (0 if never moved past the first segment)."""
    return read_offset_file(directory / files.LOG_START_FILE)


def write_log_start(directory: Path, offset: int) -> None:
    """Persists the log start durably: DeleteRecords must not be undone by a crash."""
    write_offset_file(directory / files.LOG_START_FILE, offset)


def _largest_timestamp(segment: Segment) -> int:
    """A segment's newest record timestamp, or its file's mtime if it has none (Kafka's rule)."""
    if segment.max_timestamp >= 0:
        return segment.max_timestamp
    try:
        return os.stat(segment.path).st_mtime_ns // 1_000_000
    except OSError:
        return segment.created_ms
