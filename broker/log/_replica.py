"""The parts of PartitionLog only a replicated partition uses: follower appends, truncation to a
leader's log, and the leader-epoch cache (see ``leader_epoch``).

A follower stores the leader's batches byte for byte at the leader's offsets: nothing is
re-stamped (base offset, leader epoch, timestamps and CRC stay the leader's), so every replica's
log is the same bytes and a fetch from any of them is interchangeable. Sequence checks are the
leader's job; the follower only records producer state (and closes transactions at their
markers, indexing aborts), so that it can take over duplicate detection and the last stable
offset when it becomes leader. Appends run under the log lock like the leader's.

Single-node brokers never call into this module; the epoch cache is opened lazily on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from broker.errors import InvalidRecordError, StorageError
from broker.log import batch
from broker.log._retention import write_log_start
from broker.log.leader_epoch import LeaderEpochCache
from broker.log.segment import BatchPosition

if TYPE_CHECKING:
    from broker.log.producer_state import ProducerStateManager
    from broker.log.segment import Segment

LEADER_EPOCH_FILE = "leader-epoch-checkpoint"


class ReplicaMixin:
    # Provided by PartitionLog.
    _lock: threading.RLock
    _segments: tuple[Segment, ...]
    _log_start: int
    _hw: int
    _closed: bool
    _dirty: list[Segment]
    _producers: ProducerStateManager
    _unflushed_messages: int
    _epochs: LeaderEpochCache | None
    directory: Path
    ident: str
    clock: Callable[[], int]

    def _maybe_roll(self, nbytes: int, positions: list[BatchPosition], now: int) -> Segment:
        raise NotImplementedError

    def _storage_error(self, exc: OSError, action: str) -> StorageError:
        raise NotImplementedError

    def truncate_to(self, offset: int) -> None:
        raise NotImplementedError

    @property
    def leader_epochs(self) -> LeaderEpochCache:
        """The partition's epoch -> start offset cache (loaded on first use, trimmed to the
        recovered log so a crash between append and checkpoint cannot leave stale epochs)."""
        if self._epochs is None:
            with self._lock:
                if self._epochs is None:
                    cache = LeaderEpochCache(self.directory / LEADER_EPOCH_FILE)
                    cache.truncate_from_end(self._segments[-1].next_offset)
                    self._epochs = cache
        return self._epochs

    def append_as_follower(self, records: bytes | memoryview) -> int:
        """Appends a leader's batches verbatim at their own offsets; returns the new log end.

        Batches ending before the log end (a re-fetch after a lost response) are skipped; a
        batch starting before the log end but ending after it means the logs diverged, which
        truncation should have prevented, and is refused without writing anything.
        """
        view = memoryview(records)
        located = list(batch.iter_batches(view))
        epochs = self.leader_epochs
        with self._lock:
            if self._closed:
                raise StorageError(f"log {self.ident} is closed")
            end = self._segments[-1].next_offset
            keep = [(pos, h) for pos, h in located if h.last_offset >= end]
            if not keep:
                return end
            if keep[0][1].base_offset < end:
                raise InvalidRecordError(
                    f"{self.ident}: leader batch at {keep[0][1].base_offset} overlaps the log "
                    f"end {end}; the replica must truncate first"
                )
            first_pos = keep[0][0]
            last_pos, last = keep[-1]
            size = last_pos + last.size - first_pos
            positions = [
                BatchPosition(h.base_offset, h.last_offset, pos - first_pos, h.size,
                              h.max_timestamp)
                for pos, h in keep
            ]  # fmt: skip
            try:
                segment = self._maybe_roll(size, positions, self.clock())
                segment.append([view[first_pos : first_pos + size]], size, positions)
            except OSError as exc:
                raise self._storage_error(exc, "replicate to") from exc
            if not self._dirty or self._dirty[-1] is not segment:
                self._dirty.append(segment)
            for (pos, header), position in zip(keep, positions, strict=True):
                if header.attributes & batch.ATTR_CONTROL:
                    if header.producer_id >= 0:
                        self._apply_replicated_marker(
                            view[pos : pos + header.size], header.base_offset, segment
                        )
                elif header.producer_id >= 0:
                    self._producers.update(header, position.base_offset, position.max_timestamp)
                self._unflushed_messages += header.record_count
                if header.leader_epoch > epochs.latest_epoch:
                    epochs.assign(header.leader_epoch, header.base_offset)
            return segment.next_offset

    def truncate_replica_to(self, offset: int) -> None:
        """Cuts the log (and its epoch cache) back to ``offset`` (a divergent tail)."""
        with self._lock:
            self.truncate_to(offset)
            self.leader_epochs.truncate_from_end(self._segments[-1].next_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Empties the log and restarts it at ``offset`` (a follower so far behind that the
        leader's log now starts past its end)."""
        with self._lock:
            for segment in self._segments:
                segment.delete()
            fresh = self._new_segment(offset)
            self._set_segments((fresh,))
            self._dirty = [fresh]
            self._log_start = offset
            write_log_start(self.directory, offset)
            self._hw = offset
            self._producers.delete_snapshot()
            self._rebuild_producer_state()
            self.leader_epochs.clear()

    def _new_segment(self, base: int) -> Segment:
        raise NotImplementedError

    def _apply_replicated_marker(
        self, batch: bytes | memoryview, base_offset: int, segment: Segment
    ) -> None:
        raise NotImplementedError

    def _set_segments(self, segments: tuple[Segment, ...]) -> None:
        raise NotImplementedError

    def _rebuild_producer_state(self) -> None:
        raise NotImplementedError
