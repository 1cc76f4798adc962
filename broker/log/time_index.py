"""TimeIndex: sparse map from "largest timestamp so far" to the batch that reached it.

On disk (``<base>.timeindex``): 12-byte big-endian entries ``(timestamp: i64, relative offset:
u32)``. An entry ``(T, o)`` says: the batch whose base offset is ``o`` has max timestamp ``T``,
and no batch of this segment up to and including it has a larger one. Entries are added at
the same index interval as the offset index, only when ``T`` grows, plus one final entry
when the segment is rolled, so timestamps strictly ascend even if producers' clocks do not.

Consequence used by ``lookup``: for a target ``t``, every batch up to the entry with the
largest ``T < t`` is older than ``t``, so a scan for "first batch with max timestamp >= t"
may start at that entry's batch. Persistence and thread safety: see ``_index.SparseIndex``.
"""

from __future__ import annotations

import struct

from broker.log._index import SparseIndex


class TimeIndex(SparseIndex):
    ENTRY = struct.Struct(">qI")

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Adds ``(timestamp, offset)`` if ``timestamp`` exceeds the last entry's."""
        self._append(timestamp, offset - self.base_offset)

    def lookup(self, timestamp: int) -> int:
        """An offset from which scanning finds the first batch with max timestamp >= target."""
        entry = self._floor(timestamp, strict=True)
        if entry is None:
            return self.base_offset
        return entry[1] + self.base_offset

    def max_entry(self) -> tuple[int, int] | None:
        """``(timestamp, absolute offset)`` of the last entry, if any."""
        last = self.last()
        return None if last is None else (last[0], last[1] + self.base_offset)

    def truncate_to_offset(self, offset: int) -> None:
        """Drops entries for batches at or past ``offset``."""
        rel = offset - self.base_offset
        count = len(self._values)
        while count and self._values[count - 1] >= rel:
            count -= 1
        self.truncate_entries(count)

    def entries(self) -> list[tuple[int, int]]:
        return [(k, v + self.base_offset) for k, v in zip(self._keys, self._values, strict=False)]
