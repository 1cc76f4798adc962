"""Segment: one ``.log`` file of record batches plus its offset and time indexes.

The ``.log`` file is nothing but v2 record batches back to back, exactly as produced except for
the rewritten base offset and leader epoch (``batch.py``), so every byte range from a batch
start to a batch end is a valid Fetch response body.

Invariants (established by ``append`` and re-established by ``recovery`` after a crash):

- ``size`` is always a batch boundary: bytes past it are not part of the log. ``append`` writes
  the data, then the in-memory indexes, then publishes the new ``size``; a reader that took the
  old ``size`` never sees a half-written batch or an index entry past its snapshot.
- base offsets ascend; gaps are allowed (compaction). ``next_offset`` = last batch's last
  offset + 1 (``base_offset`` when empty).

Files are read with ``os.pread`` (no file cursor, so threads share a descriptor). The ``.log``
descriptor is not owned by the Segment but borrowed from the process-wide, bounded
``_handles.FileHandleCache`` for each operation (``acquire``/``release``), so a broker with
many partitions keeps only its recently used segments open. A segment deleted by retention or
replaced by the cleaner is *retired*: if its descriptor is open, a reader still holding the
Segment keeps reading the (unlinked) inode until the object is garbage-collected; otherwise it
gets a retriable ``SegmentGoneError``. The index files hold no descriptor at all (they are
opened for each buffered write-out, see ``_index``).
"""

from __future__ import annotations

import errno
import logging
import os
import struct
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from broker.errors import StorageError
from broker.log import files
from broker.log._handles import FileHandleCache, default_cache
from broker.log.batch import HEADER_SIZE, LOG_OVERHEAD
from broker.log.offset_index import OffsetIndex
from broker.log.time_index import TimeIndex
from broker.log.txn_index import TransactionIndex

log = logging.getLogger(__name__)

_OFFSET_LENGTH = struct.Struct(">qi")  # baseOffset, batchLength
_LAST_DELTA = struct.Struct(">i")  # lastOffsetDelta at byte 23
_MAX_TS = struct.Struct(">q")  # maxTimestamp at byte 35
Buffer = bytes | bytearray | memoryview
_SCAN_MIN = 4 * 1024
_SCAN_CHUNK = 64 * 1024
_IOV_MAX = 1024  # Linux's limit on buffers per writev


class BatchPosition(NamedTuple):
    """Where one batch lies and what the indexes need to know about it (a NamedTuple: the
    append path makes one per batch, and a frozen dataclass costs three times as much)."""

    base_offset: int
    last_offset: int
    position: int
    size: int
    max_timestamp: int


class Segment:
    """A ``.log`` file and its indexes. Mutations happen under the PartitionLog lock."""

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        index_interval: int,
        index_max: int,
        *,
        cache: FileHandleCache | None = None,
    ):
        self.directory = directory
        self.base_offset = base_offset
        self.index_interval = index_interval
        self.path = files.log_file(directory, base_offset)
        self.file = (cache or default_cache()).file(self.path)
        fd = self.file.acquire()  # creates a new segment's file; StorageError if it cannot
        try:
            stat = os.fstat(fd)
        finally:
            self.file.release()
        weakref.finalize(self, self.file.finalize)  # the descriptor goes with the object
        self.size = stat.st_size
        self.created_ms = stat.st_mtime_ns // 1_000_000  # segment.ms fallback without timestamps
        self.offset_index = OffsetIndex(
            files.index_file(directory, base_offset), index_max, base_offset
        )
        self.time_index = TimeIndex(
            files.time_index_file(directory, base_offset), index_max, base_offset
        )
        self.txn_index = TransactionIndex(files.txn_index_file(directory, base_offset))
        if self.size == 0:  # a new segment: its (empty) indexes exist from the start
            for index in (self.offset_index, self.time_index):
                index.path.touch()
        self.next_offset = base_offset
        self.max_timestamp = -1
        self.offset_of_max_timestamp = base_offset
        self.first_timestamp: int | None = None  # max timestamp of the first batch: segment.ms
        self.bytes_since_index = 0

    def load_indexes(self) -> None:
        """Replaces the empty in-memory indexes with the files' contents.

        Raises ``_index.IndexCorruptError`` for a malformed file; recovery then rebuilds.
        """
        max_bytes = self.offset_index.max_bytes
        self.offset_index = OffsetIndex.load(self.offset_index.path, max_bytes, self.base_offset)
        self.time_index = TimeIndex.load(self.time_index.path, max_bytes, self.base_offset)

    # ---------------------------------------------------------------- writing

    def append(self, iov: list[Buffer], size: int, batches: list[BatchPosition]) -> None:
        """Writes whole batches (``size`` bytes in ``iov``) with one ``os.writev`` (O_APPEND)
        and indexes them.

        ``batches[i].position`` is relative to the start of the write. On any OSError the file
        is cut back to its previous size so no partial batch stays behind, and the error
        propagates.
        """
        start = self.size
        fd = self.file.acquire()
        try:
            if len(iov) <= _IOV_MAX:
                written = os.writev(fd, iov)
            else:
                written = 0
                for i in range(0, len(iov), _IOV_MAX):
                    chunk = iov[i : i + _IOV_MAX]
                    n = os.writev(fd, chunk)
                    written += n
                    if n < sum(len(b) for b in chunk):
                        break
            if written < size:  # short writes only happen near ENOSPC or on signals
                rest = memoryview(b"".join(iov))[written:]
                while len(rest):
                    rest = rest[os.write(fd, rest) :]
        except OSError:
            self._cut_back(fd, start)
            raise
        finally:
            self.file.release()
        for b in batches:
            self._index_batch(
                b.base_offset, b.last_offset, start + b.position, b.size, b.max_timestamp
            )
        self.size = start + size

    def _cut_back(self, fd: int, size: int) -> None:
        try:
            os.ftruncate(fd, size)
        except OSError as exc:  # pragma: no cover - the disk is failing; recovery cleans up
            log.error(
                "could not truncate %s back to %d after a failed write: %s", self.path, size, exc
            )

    def _index_batch(self, base: int, last: int, position: int, size: int, max_ts: int) -> None:
        if self.first_timestamp is None:
            self.first_timestamp = max_ts
        if max_ts > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = max_ts, base
        if self.bytes_since_index >= self.index_interval:
            self.offset_index.append(base, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_index = 0
        self.bytes_since_index += size
        self.next_offset = last + 1

    def on_roll(self) -> None:
        """Seals the segment: final time-index entry, buffered index entries to the OS."""
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
        self.offset_index.write_pending()
        self.time_index.write_pending()

    def write_index_pending(self) -> None:
        """Hands buffered index entries to the OS; under the PartitionLog lock."""
        self.offset_index.write_pending()
        self.time_index.write_pending()

    def fsync(self) -> None:
        """fsyncs the ``.log`` (no lock needed: appends may continue meanwhile).

        Everything appended before this call survives a power cut. The indexes are handed to
        the OS but deliberately not fsynced: recovery never trusts an index beyond what it can
        check against the log (entries past the end are dropped, the last entry must name a
        batch start, unflushed ranges are re-scanned), so a lost index page costs a longer
        scan on open, never data; and a flush costs one fsync instead of three.
        """
        fd = self.file.acquire()
        try:
            os.fsync(fd)
        finally:
            self.file.release()
        self.txn_index.flush()

    def truncate_to(self, offset: int) -> None:
        """Removes every batch whose last offset is >= ``offset``."""
        position = self.find_position(offset)
        if position >= self.size:
            return
        self.truncate_file(position)
        self.offset_index.truncate_to_position(position)
        self.time_index.truncate_to_offset(offset)
        self.txn_index.truncate_to(offset)
        self.reload_tail()

    def reload_tail(self) -> None:
        """Recomputes next offset, max timestamp and index spacing from the index tail.

        Scans headers (no CRC) from the last offset-index entry to ``size``; together with the
        last time-index entry this gives exact values (see ``time_index``).
        """
        self.next_offset, self.max_timestamp = self.base_offset, -1
        self.offset_of_max_timestamp = self.base_offset
        last = self.time_index.max_entry()
        if last is not None:
            self.max_timestamp, self.offset_of_max_timestamp = last
        _, start = self.offset_index.lookup(2**63 - 1)
        for b in self.scan(start):
            if b.max_timestamp > self.max_timestamp:
                self.max_timestamp, self.offset_of_max_timestamp = b.max_timestamp, b.base_offset
            self.next_offset = b.last_offset + 1
        self.bytes_since_index = self.size - start
        self.first_timestamp = None
        if self.size >= HEADER_SIZE:
            self.first_timestamp = _MAX_TS.unpack(self.pread(8, 35))[0]

    # ---------------------------------------------------------------- reading

    def scan(self, position: int = 0, end: int | None = None) -> Iterator[BatchPosition]:
        """Walks batch headers from ``position`` (a batch start) to ``end`` (default ``size``).

        Reads windows that start at 4 KiB and double up to 64 KiB, so a walk over large
        batches costs one small pread per header and a walk over small ones few preads in
        all. Stops silently at a header that is cut short or runs past ``end``; CRCs are not
        checked here (see recovery).
        """
        end = self.size if end is None else end
        window, wstart, chunk = b"", position, _SCAN_MIN
        while position + HEADER_SIZE <= end:
            off = position - wstart
            if off + HEADER_SIZE > len(window):
                window, wstart, off = self.pread(min(chunk, end - position), position), position, 0
                chunk = min(chunk * 2, _SCAN_CHUNK)
                if len(window) < HEADER_SIZE:
                    return
            base, length = _OFFSET_LENGTH.unpack_from(window, off)
            size = length + LOG_OVERHEAD
            if size < HEADER_SIZE or position + size > end:
                return
            last = base + _LAST_DELTA.unpack_from(window, off + 23)[0]
            max_ts = _MAX_TS.unpack_from(window, off + 35)[0]
            yield BatchPosition(base, last, position, size, max_ts)
            position += size

    def find_position(self, offset: int) -> int:
        """Position of the first batch whose last offset >= ``offset``; ``size`` if none."""
        indexed, start = self.offset_index.lookup(offset)
        if indexed == offset and start:  # an indexed batch starts exactly there: no scan
            return start
        for b in self.scan(start):
            if b.last_offset >= offset:
                return b.position
        return self.size

    def boundary_at_or_before(self, limit: int, start: int, size: int) -> int:
        """The last batch end <= ``limit``, scanning from the nearest index entry >= ``start``.

        ``size`` is the caller's snapshot of ``self.size`` (a batch boundary).
        """
        if limit >= size:
            return size
        pos = max(start, self.offset_index.position_floor(limit))
        end = pos
        for b in self.scan(pos, limit):
            end = b.position + b.size
        return end

    def batch_size_at(self, position: int) -> int:
        """Total size of the batch at ``position`` (0 if none there)."""
        head = self.pread(LOG_OVERHEAD, position)
        if len(head) < LOG_OVERHEAD:
            return 0
        return int(_OFFSET_LENGTH.unpack(head)[1]) + LOG_OVERHEAD

    def read(self, position: int, end: int) -> bytes:
        """The bytes ``[position, end)``; a concurrent truncation may return fewer."""
        return self.pread(end - position, position)

    def pread(self, count: int, position: int) -> bytes:
        """Up to ``count`` bytes at ``position`` (fewer at the end of the file).

        Raises ``StorageError`` (KAFKA_STORAGE_ERROR for the request that read) if the file
        cannot be opened or read.
        """
        fd = self.file.acquire()
        try:
            return os.pread(fd, count, position)
        except OSError as exc:
            raise StorageError(f"I/O error: could not read {self.path}: {exc}") from exc
        finally:
            self.file.release()

    def truncate_file(self, size: int) -> None:
        """Cuts the ``.log`` to ``size`` bytes (a batch boundary) and publishes the size."""
        fd = self.file.acquire()
        try:
            os.ftruncate(fd, size)
        finally:
            self.file.release()
        self.size = size

    # ---------------------------------------------------------------- lifecycle

    def close_indexes(self) -> None:
        """Writes out the buffered index entries; the ``.log`` stays readable."""
        self.offset_index.close()
        self.time_index.close()

    def close(self) -> None:
        """Closes everything now (the descriptor at its last user's release): for a Segment
        no reader will use again (the cleaner's output, a closed log's)."""
        self.close_indexes()
        self.file.discard()

    def retire(self) -> None:
        """The file is about to be replaced or deleted: never open this path again; an open
        descriptor stays valid for readers until the object dies (see the module docstring)."""
        self.file.retire()

    def delete(self) -> None:
        """Retires the segment and unlinks its files (the transaction index too)."""
        self.retire()
        self.offset_index.delete()
        self.time_index.delete()
        self.txn_index.delete()
        self.path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"Segment({self.path.name}, size={self.size}, next_offset={self.next_offset})"


def storage_error(exc: OSError, what: str) -> StorageError:
    """The error a client sees for a failed write; tells the operator what to do."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageError(
            f"disk full: could not {what}; nothing was written. Free space on that volume or "
            "lower retention.ms/retention.bytes, then retry"
        )
    return StorageError(f"I/O error: could not {what}: {exc}")
