"""Timestamp lookups for ListOffsets: by target timestamp, and the newest record.

Both find the batch through per-segment max timestamps and the sparse time index (see
``time_index``), then decode that single batch to name the exact record, as Kafka does:
ListOffsets is not a hot path, and a consumer seeking to "the first record at or after T"
should not be handed older records of the same batch. For a LogAppendTime batch every record
carries the batch's maxTimestamp, so its base offset is the answer.

Lock-free: they work on a snapshot of the segments tuple, like reads.

A batch that cannot be decoded (codec library missing, corrupt compressed data) raises the
``BrokerError`` from ``records``: the ListOffsets handler answers that partition with its error
code, and the partition and codec are logged here (rate-limited: a consumer retrying in a loop
costs one line per minute).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from broker.errors import BrokerError
from broker.log.records import decode_batches
from broker.log.segment import BatchPosition, Segment
from sluice.throttled_log import ThrottledLog

log = logging.getLogger(__name__)
_failures = ThrottledLog(log, "timestamp lookups that could not decode a batch")


def offset_for_timestamp(
    segments: Sequence[Segment], log_start: int, timestamp_ms: int
) -> tuple[int, int] | None:
    """``(offset, timestamp)`` of the first record with timestamp >= ``timestamp_ms``."""
    for segment in segments:
        if segment.max_timestamp < timestamp_ms:
            continue
        position = segment.find_position(segment.time_index.lookup(timestamp_ms))
        for b in segment.scan(position):
            if b.max_timestamp >= timestamp_ms and b.last_offset >= log_start:
                return _record_at(segment, b, log_start, lambda ts: ts >= timestamp_ms)
    return None


def max_timestamp(segments: Sequence[Segment], log_start: int) -> tuple[int, int]:
    """``(timestamp, offset)`` of the record with the largest timestamp; (-1, -1) if empty."""
    best: Segment | None = None
    for segment in segments:
        if segment.size and (best is None or segment.max_timestamp > best.max_timestamp):
            best = segment
    if best is None:
        return -1, -1
    target = best.max_timestamp
    for b in best.scan(best.find_position(best.offset_of_max_timestamp)):
        if b.max_timestamp == target:
            offset, timestamp = _record_at(best, b, log_start, lambda ts: ts >= target)
            return timestamp, offset
    return target, best.offset_of_max_timestamp


def _record_at(
    segment: Segment, b: BatchPosition, log_start: int, match: Callable[[int], bool]
) -> tuple[int, int]:
    data = segment.read(b.position, b.position + b.size)
    try:
        decoded = next(decode_batches(data))
    except BrokerError as exc:
        partition = segment.directory.name
        _failures.event(
            partition,
            "timestamp lookup cannot decode a batch",
            partition=partition,
            error=exc.error_code.name,
            reason=str(exc),
        )
        raise
    if decoded.timestamp_type == 1:  # LogAppendTime: every record carries maxTimestamp
        return max(b.base_offset, log_start), b.max_timestamp
    for record in decoded.records:
        if record.offset >= log_start and match(record.timestamp):
            return record.offset, record.timestamp
    return max(b.base_offset, log_start), b.max_timestamp
