"""Shared machinery of the two sparse segment indexes (offset and time).

An index is a file of fixed-size big-endian entries ``(key, value)``, both strictly ascending,
mirrored in two in-memory ``array``s (8 bytes per number, not a Python object each) so lookups
are a ``bisect`` without touching the file.

Design choice (instead of Kafka's preallocated mmap): entries are appended to the file, and
appends are *buffered* in memory and written out on ``flush``, roll, close, or when the buffer
reaches ``_PENDING_LIMIT`` entries. The file may therefore lag the log after a crash; that is
safe because recovery re-scans the active segment from the last index entry and drops entries
that point past the end of the log (see ``recovery.py``). A buffered index costs no syscall on
the append path. An index holds no open descriptor between write-outs (it opens, appends and
closes), so thousands of partitions cost no descriptors for their indexes.

Thread safety: mutations happen under the owning PartitionLog's lock. Lookups run without it:
``append`` grows ``values`` before ``keys`` so a concurrent bisect over ``keys`` never finds an
index missing from ``values``; ``truncate`` swaps in new arrays rather than shrinking in place.
"""

from __future__ import annotations

import bisect
import logging
import os
import struct
from array import array
from pathlib import Path
from typing import Self

from broker.log._atomic import write_atomically

log = logging.getLogger(__name__)

_PENDING_LIMIT = 1024


class IndexCorruptError(Exception):
    """The index file is inconsistent with itself or its log; recovery rebuilds it."""


class SparseIndex:
    """Base of OffsetIndex and TimeIndex; subclasses set ``ENTRY`` and the key/value meaning."""

    ENTRY: struct.Struct

    def __init__(self, path: Path, max_bytes: int, base_offset: int = 0) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.base_offset = base_offset
        self._keys = array("q")
        self._values = array("q")
        self._pending = bytearray()

    @classmethod
    def load(cls, path: Path, max_bytes: int, base_offset: int = 0) -> Self:
        """Reads an existing file (missing = empty); raises IndexCorruptError if malformed."""
        index = cls(path, max_bytes, base_offset)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return index
        size = cls.ENTRY.size
        if len(data) % size:
            raise IndexCorruptError(f"{path.name}: size {len(data)} is not a multiple of {size}")
        keys, values = index._keys, index._values
        for key, value in cls.ENTRY.iter_unpack(data):
            if keys and (key <= keys[-1] or value < values[-1]):
                raise IndexCorruptError(f"{path.name}: entries are not ascending")
            values.append(value)
            keys.append(key)
        return index

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def is_full(self) -> bool:
        return (len(self._keys) + 1) * self.ENTRY.size > self.max_bytes

    def last(self) -> tuple[int, int] | None:
        keys = self._keys
        if not keys:
            return None
        i = len(keys) - 1
        return keys[i], self._values[i]

    def _append(self, key: int, value: int) -> None:
        keys = self._keys
        if keys and key <= keys[-1]:
            return  # sparse index: a key that does not advance adds nothing
        self._values.append(value)
        keys.append(key)
        self._pending += self.ENTRY.pack(key, value)
        if len(self._pending) >= _PENDING_LIMIT * self.ENTRY.size:
            try:
                self.write_pending()
            except OSError as exc:
                # Called after the log write it indexes: raising would fail an append that
                # already happened. The entries stay buffered for the next write-out.
                log.warning("could not write index %s (kept in memory): %s", self.path, exc)

    def _floor(self, key: int, strict: bool = False) -> tuple[int, int] | None:
        """The entry with the largest key <= ``key`` (``< key`` if strict), or None."""
        keys, values = self._keys, self._values
        i = (bisect.bisect_left if strict else bisect.bisect_right)(keys, key) - 1
        if i < 0:
            return None
        return keys[i], values[i]

    def write_pending(self) -> None:
        """Hands buffered entries to the OS (page cache)."""
        if not self._pending:
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, self._pending)
        finally:
            os.close(fd)
        self._pending.clear()  # after the write: a failed one keeps the entries for the next

    def truncate_entries(self, count: int) -> None:
        """Keeps the first ``count`` entries, in memory and on disk."""
        if count >= len(self._keys):
            return
        self.write_pending()
        self._values = self._values[:count]
        self._keys = self._keys[:count]
        if self.path.exists():
            os.truncate(self.path, count * self.ENTRY.size)

    def rewrite(self) -> None:
        """Replaces the file with the in-memory entries (after a rebuild)."""
        self.close()
        data = b"".join(
            self.ENTRY.pack(k, v) for k, v in zip(self._keys, self._values, strict=True)
        )
        write_atomically(self.path, data, sync=False)  # an index can always be rebuilt
        self._pending.clear()

    def close(self) -> None:
        self.write_pending()

    def delete(self) -> None:
        self._pending.clear()
        self.close()
        self.path.unlink(missing_ok=True)
