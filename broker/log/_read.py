"""The fetch path inside one segment: whole batches from the one holding an offset.

Fast path, one ``pread``: the offset index gives the nearest indexed batch start ``p`` at or
before the offset; read ``max_bytes`` from ``p`` and walk the batch headers *in that buffer*
to the batch holding the offset (usually the first one: with batches of at least
``index.interval.bytes`` every batch is indexed). The end is the last batch boundary within
``max_bytes`` of it, found by the index again (its floor entry below the limit) plus a walk of
one or two headers in the same buffer. The result is a ``memoryview`` of that buffer: the
bytes are copied once, by the kernel.

The general path (``_read_general``) handles what the buffer cannot answer (the batch holding
the offset lies beyond it, or a single batch is larger than ``max_bytes``) with a header scan
and a second ``pread``.

Both only read below ``size``, the caller's snapshot of the segment size, which is always a
batch boundary (see ``segment``), so a concurrent append is never seen half-written.
"""

from __future__ import annotations

import struct

from broker.log.batch import HEADER_SIZE, LOG_OVERHEAD, peek_size
from broker.log.segment import Segment

_OFFSET_LENGTH = struct.Struct(">qi")
_LAST_DELTA = struct.Struct(">i")
_NEED = 27  # baseOffset, batchLength, ..., lastOffsetDelta: enough to know a batch's range


def read_batches(
    segment: Segment,
    offset: int,
    max_bytes: int,
    size: int,
    upper_bound: int | None,
    min_one: bool,
) -> bytes | memoryview | None:
    """The bytes to serve, ``b""`` if limits leave nothing, None if no batch of this segment
    (below ``size``) holds ``offset`` or anything after it: the caller tries the next one."""
    limit = size
    if upper_bound is not None and upper_bound < segment.next_offset:
        limit = min(size, segment.find_position(upper_bound))
    _, p = segment.offset_index.lookup(offset)
    if p >= size:
        return None
    buf = segment.pread(min(size, p + max(max_bytes, HEADER_SIZE)) - p, p)
    rel = _find_start(buf, offset)
    if rel is None:
        return _read_general(segment, offset, max_bytes, size, limit, min_one)
    if rel < 0:  # walked the whole rest of the segment: nothing at or after offset here
        return (
            None
            if p - rel - 1 >= size
            else _read_general(segment, offset, max_bytes, size, limit, min_one)
        )
    start = p + rel
    if start >= limit:
        return b""
    end_limit = min(limit, start + max_bytes, p + len(buf))
    end = end_limit if end_limit == limit else _boundary(segment, buf, p, start, end_limit)
    if end > start:
        return memoryview(buf)[rel : end - p]
    if not min_one:
        return b""
    whole = _OFFSET_LENGTH.unpack_from(buf, rel)[1] + LOG_OVERHEAD
    if rel + whole <= len(buf):
        return memoryview(buf)[rel : rel + whole]
    return _whole(segment.pread(whole, start))


def _find_start(buf: bytes, offset: int) -> int | None:
    """Position in ``buf`` of the first batch whose last offset >= ``offset``.

    None if a header is cut by the end of the buffer; ``-(end + 1)`` if the walk consumed the
    buffer exactly (``end`` = where the next batch would start).
    """
    pos, n = 0, len(buf)
    while pos + _NEED <= n:
        base, length = _OFFSET_LENGTH.unpack_from(buf, pos)
        if length + LOG_OVERHEAD < HEADER_SIZE:
            return None  # not a batch header: let the careful path decide
        if base + _LAST_DELTA.unpack_from(buf, pos + 23)[0] >= offset:
            return pos
        pos += length + LOG_OVERHEAD
    return -(pos + 1) if pos >= n else None


def _boundary(segment: Segment, buf: bytes, p: int, start: int, limit: int) -> int:
    """The last batch end <= ``limit``, walking headers in ``buf`` from the index floor."""
    pos = max(start, segment.offset_index.position_floor(limit))
    while True:
        rel = pos - p
        if rel + LOG_OVERHEAD > len(buf):
            return pos
        nxt = pos + _OFFSET_LENGTH.unpack_from(buf, rel)[1] + LOG_OVERHEAD
        if nxt > limit:
            return pos
        pos = nxt


def _read_general(
    segment: Segment, offset: int, max_bytes: int, size: int, limit: int, min_one: bool
) -> bytes | memoryview | None:
    start = segment.find_position(offset)
    if start >= size:
        return None
    if start >= limit:
        return b""
    end = segment.boundary_at_or_before(min(limit, start + max_bytes), start, limit)
    if end <= start:
        if not min_one:
            return b""
        end = start + segment.batch_size_at(start)
    return _whole(segment.read(start, end))


def _whole(data: bytes) -> bytes:
    """``data`` cut to whole batches (a concurrent truncation may have shortened it)."""
    pos = 0
    while (size := peek_size(data, pos)) is not None and pos + size <= len(data):
        pos += size
    return data if pos == len(data) else data[:pos]
