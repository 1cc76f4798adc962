"""LogCleaner: log compaction for ``cleanup.policy=compact`` (and ``compact,delete``).

One pass over a partition:

1. The *cleanable range* is the closed segments (never the active one), oldest first, up to
   the first whose newest timestamp is within ``min.compaction.lag.ms`` of now or that
   reaches the last stable offset.
2. A pass runs only if it is worth it: the bytes written since the last pass (tracked by a
   checkpoint offset in ``cleaner-checkpoint.json``) are at least
   ``min.cleanable.dirty.ratio`` of the range, or a tombstone kept by an earlier pass has
   now expired, or the caller forces it.
3. Map every key in the range to its newest offset (decoding batches through
   ``records.decode_batches``, so gzip/snappy/lz4/zstd all work).
4. Rewrite each segment in which something is dropped: a record survives if it is its key's
   newest in the range; records without a key are dropped (Kafka rejects them for compacted
   topics, we cannot check on the undecoded hot path); a surviving tombstone (null value) is
   dropped once ``now - its timestamp > delete.retention.ms``. Batches that keep every record
   are copied byte for byte; others are re-encoded with their original codec, base offset,
   lastOffsetDelta, producer fields, leader epoch and timestamp type, so every surviving
   record keeps its offset and the batch its offset range. Kept markers (5), and the last
   data batch of each idempotent producer if it would vanish, are copied unchanged (the
   latter keeps producer sequence state rebuildable from headers, as Kafka's cleaner does).
5. Transactions (``_cleaner_txn``): the range ends below the last stable offset; aborted
   transactions' records are removed and never enter the key map; a marker is kept while
   data of its transaction remains, then dropped ``delete.retention.ms`` after its
   timestamp, together with its transaction-index entry.

Tombstone expiry is measured from the tombstone's own timestamp, not from when a cleaner
first saw it (Kafka's delete horizon): consumers get ``delete.retention.ms`` after the delete
was produced to read it.

Concurrency: steps 3-4 read segments with ``pread`` and write the new segment into a build
directory without any lock; appends and reads continue. Only ``PartitionLog.swap_segment``
takes the log lock, for a few renames, and it refuses if the segment changed meanwhile.

Failures stay with their partition (``clean_all``): a partition whose pass raises (a batch no
codec can decode, an I/O error) is logged by name, kept in ``uncleanable_partitions`` (Kafka's
LogCleaner term) and retried on a growing schedule, while every other partition is cleaned as
usual. A pass that fails leaves the partition as it was: the old segments stay until a swap.
"""

from __future__ import annotations

import json
import logging
import shutil
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from crc32c import crc32c

from broker.background import FailureTracker, TaskFailure
from broker.log import batch, files
from broker.log._atomic import write_atomically
from broker.log._cleaner_txn import AbortedRanges, TxnRetention
from broker.log._handles import SegmentGoneError
from broker.log.partition_log import Clock, wall_clock_ms
from broker.log.records import DecodedBatch, Record, build_batch, decode_batches
from broker.log.segment import BatchPosition, Segment
from broker.log.txn_index import write_index

if TYPE_CHECKING:
    from broker.log.partition_log import PartitionLog

log = logging.getLogger(__name__)

_NEVER = 2**63 - 1
RETRY_SCHEDULE_MS = (15_000, 30_000, 60_000, 120_000, 300_000, 600_000)


class LogCleaner:
    """Stateless between passes except for each partition's checkpoint file and the set of
    partitions whose last pass failed."""

    def __init__(
        self, clock: Clock = wall_clock_ms, retry_schedule_ms: tuple[int, ...] = RETRY_SCHEDULE_MS
    ) -> None:
        self.clock = clock
        self._failures = FailureTracker("log cleaner", retry_schedule_ms, logger=log)

    def clean_all(self, plogs: list[PartitionLog], now_ms: int | None = None) -> int:
        """One pass over every compacted partition in ``plogs``; returns segments rewritten.

        Each partition is cleaned on its own: one that fails is recorded and skipped until its
        retry time, and never stops the others.
        """
        now = self.clock() if now_ms is None else now_ms
        total = 0
        for plog in plogs:
            if plog.config.compact:
                key = plog.directory.name
                total += self._failures.run(key, now, partial(self.clean, plog, now))
        self._failures.retain(p.directory.name for p in plogs)
        return total

    @property
    def uncleanable_partitions(self) -> list[TaskFailure]:
        """Partitions whose last cleaning failed (name, error, failures, next retry)."""
        return self._failures.failures()

    def clean(self, plog: PartitionLog, now_ms: int | None = None, *, force: bool = False) -> int:
        """One compaction pass; returns the number of segments rewritten."""
        try:
            return self._clean(plog, now_ms, force)
        except SegmentGoneError as exc:  # retention or truncation removed a segment meanwhile
            log.debug("%s cleaning deferred to the next pass: %s", plog.ident, exc)
            shutil.rmtree(plog.directory / files.CLEANER_BUILD_DIR, ignore_errors=True)
            return 0

    def _clean(self, plog: PartitionLog, now_ms: int | None, force: bool) -> int:
        now = self.clock() if now_ms is None else now_ms
        cfg = plog.config
        segments = plog.segments()
        cutoff = now - cfg.min_compaction_lag_ms
        stable = plog.last_stable_offset  # open transactions are never cleaned
        cleanable = []
        for segment in segments[:-1]:
            if segment.max_timestamp > cutoff or segment.next_offset > stable:
                break
            cleanable.append((segment, segment.size))
        if not cleanable:
            return 0
        checkpoint, deadline = _read_checkpoint(plog.directory)
        total = sum(size for _, size in cleanable)
        dirty = sum(size for s, size in cleanable if s.next_offset > checkpoint)
        due = dirty > 0 and dirty >= cfg.min_cleanable_dirty_ratio * total
        if not (force or due or now >= deadline):
            return 0
        aborted = AbortedRanges(segments)
        latest, producer_last = self._latest_offsets(cleanable, aborted)
        txns = TxnRetention(now, cfg.delete_retention_ms)
        rewritten, next_deadline = 0, _NEVER
        for segment, size in cleanable:
            build_dir, deadline_here = self._rebuild(
                plog, segment, size, latest, producer_last, now, aborted, txns
            )
            next_deadline = min(next_deadline, deadline_here)
            if build_dir is None:
                continue
            if plog.swap_segment(segment, build_dir, size):
                rewritten += 1
            shutil.rmtree(build_dir, ignore_errors=True)
        end = cleanable[-1][0].next_offset
        _write_checkpoint(plog.directory, end, next_deadline)
        log.info("%s cleaned up to offset %d: %d segment(s) rewritten", plog.ident, end, rewritten)
        return rewritten

    # ------------------------------------------------------------ passes over the data

    @staticmethod
    def _batches(segment: Segment, size: int) -> list[tuple[BatchPosition, bytes]]:
        return [(b, segment.read(b.position, b.position + b.size)) for b in segment.scan(0, size)]

    def _latest_offsets(
        self, cleanable: list[tuple[Segment, int]], aborted: AbortedRanges
    ) -> tuple[dict[bytes, int], set[int]]:
        """(newest offset per key, base offsets of each idempotent producer's last batch);
        aborted transactions' records never count."""
        latest: dict[bytes, int] = {}
        producer_last: dict[int, int] = {}
        for segment, size in cleanable:
            for _, raw in self._batches(segment, size):
                for decoded in decode_batches(raw):
                    if decoded.producer_id >= 0 and not decoded.is_control:
                        producer_last[decoded.producer_id] = decoded.base_offset
                    if decoded.is_control or (
                        decoded.is_transactional
                        and aborted.is_aborted(decoded.producer_id, decoded.base_offset)
                    ):
                        continue
                    for record in decoded.records:
                        if record.key is not None:
                            latest[record.key] = record.offset
        return latest, set(producer_last.values())

    def _survivors(
        self, decoded: DecodedBatch, latest: dict[bytes, int], now: int, retention: int
    ) -> tuple[list[Record], int]:
        """(records to keep, earliest future tombstone expiry among them)."""
        keep, deadline = [], _NEVER
        for record in decoded.records:
            if record.key is None or latest.get(record.key) != record.offset:
                continue
            if record.value is None:
                expires = record.timestamp + retention
                if now > expires:
                    continue
                deadline = min(deadline, expires + 1)
            keep.append(record)
        return keep, deadline

    def _rebuild(
        self,
        plog: PartitionLog,
        segment: Segment,
        size: int,
        latest: dict[bytes, int],
        producer_last: set[int],
        now: int,
        aborted: AbortedRanges,
        txns: TxnRetention,
    ) -> tuple[Path | None, int]:
        """Writes the compacted segment into a build directory (None if nothing would change);
        also returns the earliest expiry of a tombstone or marker it keeps."""
        out: list[tuple[bytes, int, int, int]] = []  # (bytes, base, last, max_ts)
        changed, deadline = False, _NEVER
        markers: set[int] = set()  # offsets of the markers kept
        for b, raw in self._batches(segment, size):
            decoded = next(decode_batches(raw))
            pid = decoded.producer_id
            if decoded.is_control:
                keep_marker, dl = txns.keep_marker(pid, decoded.max_timestamp)
                deadline = min(deadline, dl)
                if keep_marker:
                    out.append((raw, b.base_offset, b.last_offset, b.max_timestamp))
                    markers.add(b.base_offset)
                else:
                    changed = True
                continue
            if decoded.is_transactional and aborted.is_aborted(pid, b.base_offset):
                if b.base_offset in producer_last:  # header kept for the producer (below)
                    out.append((raw, b.base_offset, b.last_offset, b.max_timestamp))
                    txns.kept_data(pid)
                else:
                    changed = True
                continue
            keep, dl = self._survivors(decoded, latest, now, plog.config.delete_retention_ms)
            deadline = min(deadline, dl)
            if decoded.is_transactional and (keep or b.base_offset in producer_last):
                txns.kept_data(pid)
            if len(keep) == len(decoded.records):
                out.append((raw, b.base_offset, b.last_offset, b.max_timestamp))
                continue
            if not keep and b.base_offset in producer_last:
                # An idempotent producer's last batch stays (stale records and all): its
                # header is what rebuilds that producer's sequence state after a reopen.
                out.append((raw, b.base_offset, b.last_offset, b.max_timestamp))
                continue
            changed = True
            if keep:
                rebuilt = _encode(decoded, keep, raw)
                header = batch.read_header(rebuilt)
                out.append((rebuilt, header.base_offset, header.last_offset, header.max_timestamp))
        if not changed:
            return None, deadline
        build_dir = plog.directory / files.CLEANER_BUILD_DIR
        shutil.rmtree(build_dir, ignore_errors=True)
        build_dir.mkdir()
        cfg = plog.config
        new = Segment(
            build_dir, segment.base_offset, cfg.index_interval_bytes, cfg.segment_index_bytes
        )
        try:
            pending, positions = bytearray(), []
            for data, base, last, max_ts in out:
                positions.append(BatchPosition(base, last, len(pending), len(data), max_ts))
                pending += data
                if len(pending) >= 1 << 20:
                    new.append([pending], len(pending), positions)
                    pending, positions = bytearray(), []
            if pending:
                new.append([pending], len(pending), positions)
            new.on_roll()
            new.fsync()
        finally:
            new.close()
        entries = segment.txn_index.entries
        if entries:  # written even when empty: an empty one replaces the old (see recovery)
            kept = [t for t in entries if t.last_offset in markers]
            write_index(files.txn_index_file(build_dir, segment.base_offset), kept)
        return build_dir, deadline


def _encode(decoded: DecodedBatch, keep: list[Record], raw: bytes) -> bytes:
    """Re-encodes surviving records like the original batch (codec, producer, epoch, type)."""
    data = bytearray(
        build_batch(
            keep,
            base_offset=decoded.base_offset,
            compression=decoded.compression,
            producer_id=decoded.producer_id,
            producer_epoch=decoded.producer_epoch,
            base_sequence=decoded.base_sequence,
            is_transactional=decoded.is_transactional,
        )
    )
    batch.set_leader_epoch(data, 0, batch.read_header(raw).leader_epoch)
    # Keep lastOffsetDelta (as Kafka does) even if the batch's last records went: the batch
    # still spans the same offsets and its producer's last sequence stays derivable.
    data[23:27] = (decoded.last_offset - decoded.base_offset).to_bytes(4, "big")
    if decoded.timestamp_type == 1:  # LogAppendTime: keep the flag and the broker's timestamp
        attrs = int.from_bytes(data[21:23], "big") | batch.ATTR_TIMESTAMP_TYPE
        data[21:23] = attrs.to_bytes(2, "big")
        data[35:43] = decoded.max_timestamp.to_bytes(8, "big", signed=True)
    data[17:21] = crc32c(memoryview(data)[21:]).to_bytes(4, "big")
    return bytes(data)


def _read_checkpoint(directory: Path) -> tuple[int, int]:
    """(offset cleaned up to, earliest expiry of a kept tombstone)."""
    try:
        doc = json.loads((directory / files.CLEANER_CHECKPOINT_FILE).read_text())
        return int(doc["offset"]), int(doc["tombstone_deadline"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0, _NEVER


def _write_checkpoint(directory: Path, offset: int, deadline: int) -> None:
    doc = {"offset": offset, "tombstone_deadline": deadline}
    write_atomically(directory / files.CLEANER_CHECKPOINT_FILE, json.dumps(doc).encode())
