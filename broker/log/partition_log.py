"""PartitionLog: one topic partition as an ordered list of segments.

Append path (never decodes a record): validate every batch's header and CRC-32C
(``batch.iter_batches``), check idempotent-producer sequences, rewrite each batch's base
offset and leader epoch (outside the CRC) in a copy of its header only, and, for
``message.timestamp.type=LogAppendTime``, set the timestamp-type bit and ``maxTimestamp`` to
the broker's clock; those two fields *are* covered by the CRC, so only in that mode is the CRC
recomputed (``_append``). Then one ``os.writev`` of headers + untouched payload views to the
active segment (O_APPEND): one syscall, no payload copy.

Read path: find the segment by base offset (bisect), then ``_read``: one ``os.pread`` from
the nearest offset-index entry, the batch holding the offset and the end of the range found
by walking a few headers in that buffer: whole batches only, at most one segment per call.

Thread safety: ``_lock`` serialises append, roll, truncation, retention, config changes and the
cleaner's segment swap. Readers take no lock: they snapshot ``_segments`` (a tuple replaced
wholesale, never mutated) and the segment's ``size`` (published after its bytes are written),
so they see whole batches only. Durability: see ``docs/storage.md`` and ``flush``.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from broker.errors import (
    InvalidRecordError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
    StorageError,
)
from broker.log import _timestamps, batch, files
from broker.log._append import stamp
from broker.log._flush import FlushMixin
from broker.log._read import read_batches
from broker.log._replica import ReplicaMixin
from broker.log._retention import (
    RetentionMixin,
    read_log_start,
    read_offset_file,
)
from broker.log._txn import TxnMixin
from broker.log.batch import ATTR_CONTROL
from broker.log.config import INT32_MAX, LONG_MAX, LogConfig
from broker.log.leader_epoch import LeaderEpochCache
from broker.log.producer_state import ProducerStateManager
from broker.log.recovery import recover_directory, recover_segments
from broker.log.segment import BatchPosition, Segment, storage_error

log = logging.getLogger(__name__)

Clock = Callable[[], int]


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class AppendInfo:
    first_offset: int
    last_offset: int
    log_append_time: int  # -1 for CreateTime
    log_start_offset: int
    duplicate: bool = False


@dataclass(frozen=True)
class ReadResult:
    chunks: list[bytes | memoryview]  # whole batches, in order
    size: int


def _empty() -> ReadResult:
    return ReadResult([], 0)  # a fresh one each time: callers may extend chunks


class PartitionLog(TxnMixin, FlushMixin, RetentionMixin, ReplicaMixin):
    """Segments of one partition; see the module docstring for the paths and locking."""

    def __init__(
        self, directory: Path, topic: str, partition: int, config: LogConfig, clock: Clock
    ):
        self.directory = directory
        self.topic = topic
        self.partition = partition
        self.config = config
        self.clock = clock
        self.ident = f"[{topic}-{partition}]"
        self.hw_follows_leo = True  # single node: everything appended is committed
        self._lock = threading.RLock()
        self._segments: tuple[Segment, ...] = ()
        self._log_start = 0
        self._hw = 0
        self._producers = ProducerStateManager(directory / files.PRODUCER_STATE_FILE)
        self._unflushed_messages = 0
        self._last_flush_ms = clock()
        self._dirty: list[Segment] = []
        self._recovery_point = 0
        self._closed = False
        self._epochs: LeaderEpochCache | None = None  # cluster mode only; see _replica

    # ------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        directory: Path,
        topic: str,
        partition: int,
        config: LogConfig,
        *,
        clock: Clock = wall_clock_ms,
    ) -> PartitionLog:
        """Opens (creating if needed) and recovers the partition directory."""
        self = cls(directory, topic, partition, config, clock)
        directory.mkdir(parents=True, exist_ok=True)
        recover_directory(directory, self.ident)
        persisted_start = read_log_start(directory)
        recovery_point = read_offset_file(directory / files.RECOVERY_POINT_FILE)
        segments = recover_segments(directory, self.ident, self._new_segment, recovery_point)
        if not segments:
            segments.append(self._new_segment(persisted_start))
        self._set_segments(tuple(segments))
        self._log_start = max(persisted_start, segments[0].base_offset)
        if self._log_start > self.log_end_offset:
            self._log_start = self.log_end_offset
        self._hw = self.log_end_offset
        self._recovery_point = min(recovery_point, self.log_end_offset)
        self._rebuild_producer_state()
        log.debug(
            "%s opened: %d segment(s), log start %d, log end %d",
            self.ident, len(segments), self._log_start, self.log_end_offset,
        )  # fmt: skip
        return self

    def _new_segment(self, base: int) -> Segment:
        cfg = self.config
        segment = Segment(self.directory, base, cfg.index_interval_bytes, cfg.segment_index_bytes)
        if segment.size == 0:
            segment.created_ms = self.clock()
        return segment

    def _set_segments(self, segments: tuple[Segment, ...]) -> None:
        # One attribute store: a reader sees the old tuple or the new one, never a mix.
        self._segments = segments

    # ------------------------------------------------------------ offsets

    @property
    def log_start_offset(self) -> int:
        return self._log_start

    @property
    def log_end_offset(self) -> int:
        return self._segments[-1].next_offset

    @property
    def high_watermark(self) -> int:
        """The end of what consumers may read (fetch's ``upper_bound``).

        Single node (``hw_follows_leo``): the log end offset after each append; but if the
        topic has a ``flush.messages`` policy, only what the last ``flush()`` made durable, so
        no consumer reads a record that a power cut could still take back. Cluster mode will
        clear ``hw_follows_leo`` and drive it with ``set_high_watermark``.
        """
        return self._hw

    def set_high_watermark(self, offset: int) -> None:
        with self._lock:
            self._hw = max(self._log_start, min(offset, self.log_end_offset))

    def size_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    def segments(self) -> tuple[Segment, ...]:
        """Snapshot of the segments, oldest first (the last one is active)."""
        return self._segments

    # ------------------------------------------------------------ append

    def append(
        self, records: bytes, *, leader_epoch: int = 0, now_ms: int | None = None
    ) -> AppendInfo:
        """Appends one or more v2 batches; see the module docstring. Nothing is written unless
        every batch is valid."""
        located = list(batch.iter_batches(records))
        if not located:
            raise InvalidRecordError("produce request carries no record batches")
        limit = self.config.max_message_bytes
        for _, header in located:
            if header.size > limit:
                raise RecordTooLargeError(
                    f"record batch of {header.size} bytes exceeds max.message.bytes={limit} "
                    f"of {self.topic}"
                )
            if header.record_count <= 0:
                raise InvalidRecordError("record batch has no records")
            if header.attributes & ATTR_CONTROL:
                raise InvalidRecordError(
                    "clients may not write control batches (transaction markers)"
                )
        with self._lock:
            if self._closed:
                raise StorageError(f"log {self.ident} is closed")
            headers = [h for _, h in located]
            duplicate = self._producers.check(headers)
            if duplicate is not None:
                return AppendInfo(
                    duplicate.first_offset, duplicate.last_offset, -1, self._log_start, True
                )
            now = self.clock() if now_ms is None else now_ms
            first = self.log_end_offset
            segment, positions, append_time = self._write(records, located, leader_epoch, now)
            for header, position in zip(headers, positions, strict=True):
                if header.producer_id >= 0:
                    self._producers.update(header, position.base_offset, position.max_timestamp)
            if self.hw_follows_leo and self.config.flush_messages == LONG_MAX:
                self._hw = segment.next_offset  # else flush() moves it (see high_watermark)
            return AppendInfo(
                first,
                positions[-1].last_offset,
                -1 if append_time is None else append_time,
                self._log_start,
            )

    def _write(
        self, records: bytes | memoryview, located: list[tuple[int, batch.BatchHeader]],
        leader_epoch: int, now: int,
    ) -> tuple[Segment, list[BatchPosition], int | None]:  # fmt: skip
        """Stamps and writes validated batches at the log end (under the lock)."""
        append_time = now if self.config.log_append_time else None
        iov, positions = stamp(records, located, self.log_end_offset, leader_epoch, append_time)
        size = positions[-1].position + positions[-1].size
        try:
            segment = self._maybe_roll(size, positions, now)
            segment.append(iov, size, positions)
        except OSError as exc:
            raise self._storage_error(exc, "append to") from exc
        if not self._dirty or self._dirty[-1] is not segment:
            self._dirty.append(segment)
        for _, header in located:
            self._unflushed_messages += header.record_count
        return segment, positions, append_time

    def _hw_moves_on_append(self) -> bool:
        return self.config.flush_messages == LONG_MAX

    def _storage_error(self, exc: OSError, action: str) -> StorageError:
        error = storage_error(exc, f"{action} {self.ident} in {self.directory}")
        log.error("%s %s", self.ident, error)
        return error

    def _maybe_roll(self, nbytes: int, positions: list[BatchPosition], now: int) -> Segment:
        active = self._segments[-1]
        if active.size == 0:
            return active
        cfg = self.config
        first_ts = active.first_timestamp
        newest = (
            positions[0].max_timestamp
            if len(positions) == 1
            else max(p.max_timestamp for p in positions)
        )
        age = (
            newest - first_ts if first_ts is not None and first_ts >= 0 else now - active.created_ms
        )
        if (
            active.size + nbytes > cfg.segment_bytes
            or age > cfg.segment_ms
            or active.offset_index.is_full
            or active.time_index.is_full
            or positions[-1].last_offset - active.base_offset > INT32_MAX
        ):
            return self.roll()
        return active

    def roll(self) -> Segment:
        """Seals the active segment and starts a new one at the log end offset."""
        with self._lock:
            active = self._segments[-1]
            if active.size == 0:
                return active
            active.on_roll()
            new = self._new_segment(self.log_end_offset)
            self._set_segments((*self._segments, new))
            try:
                active.txn_index.flush()  # entries below the snapshot must be durable
                self._producers.save(new.base_offset)
            except OSError as exc:
                log.warning("%s could not write producer state snapshot: %s", self.ident, exc)
            log.info("%s rolled new segment at offset %d", self.ident, new.base_offset)
            return new

    # ------------------------------------------------------------ read

    def read(
        self, offset: int, max_bytes: int, *, upper_bound: int | None = None, min_one: bool = True
    ) -> ReadResult:
        """Whole batches from the one containing ``offset``, before ``upper_bound``."""
        segments = self._segments
        start_offset, end_offset = self._log_start, segments[-1].next_offset
        if offset < start_offset or offset > end_offset:
            raise OffsetOutOfRangeError(
                f"offset {offset} is out of range for {self.ident}: "
                f"log start {start_offset}, log end {end_offset}"
            )
        if upper_bound is not None and offset >= upper_bound:
            return _empty()
        i = max(0, bisect.bisect_right(segments, offset, key=_base_offset) - 1)
        for segment in segments[i:]:
            data = read_batches(segment, offset, max_bytes, segment.size, upper_bound, min_one)
            if data is not None:
                return ReadResult([data], len(data)) if data else _empty()
        return _empty()

    # ------------------------------------------------------------ timestamps

    def offset_for_timestamp(self, timestamp_ms: int) -> tuple[int, int] | None:
        """``(offset, timestamp)`` of the first record with timestamp >= ``timestamp_ms``
        (None if there is none); see ``_timestamps``."""
        return _timestamps.offset_for_timestamp(self._segments, self._log_start, timestamp_ms)

    def last_batch_max_timestamp(self) -> tuple[int, int]:
        """``(timestamp, offset)`` of the record with the largest timestamp; (-1, -1) if empty."""
        return _timestamps.max_timestamp(self._segments, self._log_start)

    # ------------------------------------------------------------ durability, lifecycle

    def update_config(self, config: LogConfig) -> None:
        with self._lock:
            self.config = config
            for segment in self._segments:
                segment.index_interval = config.index_interval_bytes

    def close(self) -> None:
        """Flushes, snapshots producer state and closes the index files; idempotent.

        Appends fail afterwards. The ``.log`` descriptors are released when the last reference
        to this log (or to a segment a reader still holds) goes away.
        """
        with self._lock:
            if self._closed:
                return
            self.flush()
            try:
                self._producers.save(self.log_end_offset)
            except OSError as exc:
                log.warning("%s could not write producer state snapshot: %s", self.ident, exc)
            for segment in self._segments:
                segment.close_indexes()  # .log fds close with the objects (see segment)
            self._closed = True
            log.debug("%s closed at log end offset %d", self.ident, self.log_end_offset)


def _base_offset(segment: Segment) -> int:
    return segment.base_offset
