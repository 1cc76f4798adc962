"""TransactionIndex: the aborted transactions whose abort marker lies in one segment.

A ``read_committed`` fetch must tell the consumer which producers' batches in the returned
range belong to aborted transactions (the Fetch response's ``aborted_transactions``); this
file answers that without reading the log. One ``<base>.txnindex`` per segment, written when
an abort marker is appended to that segment, in Kafka's layout: 34-byte big-endian entries::

    version:int16 (0)  producer_id:int64  first_offset:int64  last_offset:int64
    last_stable_offset:int64

``first_offset`` is the transaction's first batch in this partition, ``last_offset`` the
offset of its abort marker, ``last_stable_offset`` the partition's LSO right after the abort
(the first offset of the oldest transaction still open, or ``last_offset + 1``). Entries are
in marker order, so ``last_offset`` ascends. A search from a fetch offset walks the segments
from the one holding it and can stop at the first entry whose ``last_stable_offset`` is past
the fetched range: no transaction open at that point can end later (Kafka's
``collectAbortedTxns``).

Files are created on the first abort only and read lazily, once, on the first search; most
segments never have one. Writes go to the page cache (``append``); ``flush`` fsyncs, which
``PartitionLog`` does when it seals the segment (roll) and on close, so every entry below the
producer-state snapshot is durable. Entries at or after the snapshot offset are rebuilt when
the log replays its tail on open (``PartitionLog._rebuild_producer_state``), and a torn
trailing entry is dropped on load.

Thread safety: mutations under the owning PartitionLog's lock; searches read ``_entries``,
which is replaced (never mutated) on truncation and only appended to otherwise.
"""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger(__name__)

ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = ENTRY.size  # 34
VERSION = 0


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    """One segment's aborted transactions; see the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: list[AbortedTxn] | None = None  # None: not read yet
        self._unsynced = False

    @property
    def entries(self) -> list[AbortedTxn]:
        if self._entries is None:
            self._entries = self._load()
        return self._entries

    def _load(self) -> list[AbortedTxn]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        whole = len(data) - len(data) % ENTRY_SIZE
        if whole != len(data):
            log.warning(
                "dropping a torn entry at the end of the transaction index",
                extra={"file": str(self.path), "bytes": len(data) - whole},
            )
            with open(self.path, "r+b") as fh:
                fh.truncate(whole)
        out = []
        for pos in range(0, whole, ENTRY_SIZE):
            version, pid, first, last, lso = ENTRY.unpack_from(data, pos)
            if version != VERSION:
                log.warning(
                    "transaction index entry of unknown version",
                    extra={"file": str(self.path), "version": version},
                )
                continue
            out.append(AbortedTxn(pid, first, last, lso))
        return out

    def append(self, txn: AbortedTxn) -> None:
        """Adds the entry of an abort marker just appended to this segment."""
        entries = self.entries
        if entries and txn.last_offset <= entries[-1].last_offset:
            raise ValueError(
                f"aborted transaction at {txn.last_offset} is not after the last indexed "
                f"one at {entries[-1].last_offset} in {self.path.name}"
            )
        with open(self.path, "ab") as fh:
            fh.write(ENTRY.pack(VERSION, *txn))
        entries.append(txn)
        self._unsynced = True

    def collect(self, fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """Aborted transactions overlapping ``[fetch_offset, upper_bound)``; the flag is True
        when no later segment can add one (an entry's LSO reached ``upper_bound``)."""
        found = []
        for txn in self.entries:
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound:
                return found, True
        return found, False

    def truncate_to(self, offset: int) -> None:
        """Drops entries whose marker is at or after ``offset`` (log truncation, replay)."""
        if self._entries is None and not self.path.exists():
            return
        keep = [t for t in self.entries if t.last_offset < offset]
        if len(keep) == len(self.entries):
            return
        self._entries = keep
        if keep:
            self._rewrite(keep)
        else:
            self.path.unlink(missing_ok=True)

    def _rewrite(self, entries: list[AbortedTxn]) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as fh:
            fh.write(b"".join(ENTRY.pack(VERSION, *t) for t in entries))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        self._unsynced = False

    def flush(self) -> None:
        """fsyncs appended entries (when the segment is sealed or the log closes)."""
        if not self._unsynced:
            return
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self._unsynced = False

    def reload(self) -> None:
        """Forgets the cached entries (the file was replaced by the cleaner)."""
        self._entries = None
        self._unsynced = False

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)
        self._entries = []
        self._unsynced = False


def write_index(path: Path, entries: list[AbortedTxn]) -> None:
    """Writes ``entries`` as a new, fsynced index file at ``path`` (the cleaner's output)."""
    with open(path, "wb") as fh:
        fh.write(b"".join(ENTRY.pack(VERSION, *t) for t in entries))
        fh.flush()
        os.fsync(fh.fileno())
