"""OffsetIndex: sparse map from offset to the file position of the batch holding it.

On disk (``<base>.index``): 8-byte big-endian entries ``(relative offset: u32, position: u32)``
where relative offset = the batch's *base* offset minus the segment's base offset, and position
= that batch's byte position in the ``.log``. Both columns strictly ascend. An entry is added
for the first batch after at least ``index.interval.bytes`` of batches since the previous one,
so a lookup lands at most one interval before the wanted batch and a short header scan finishes.

Because entries point at batch *starts*, ``lookup(o)`` (largest entry offset <= o) is always at
or before the batch that contains ``o``, whatever that batch's size. Persistence and thread
safety: see ``_index.SparseIndex``.
"""

from __future__ import annotations

import bisect
import struct

from broker.log._index import SparseIndex


class OffsetIndex(SparseIndex):
    ENTRY = struct.Struct(">II")

    def append(self, offset: int, position: int) -> None:
        """Indexes the batch whose base offset is ``offset`` at ``position`` in the log."""
        self._append(offset - self.base_offset, position)

    def lookup(self, offset: int) -> tuple[int, int]:
        """``(offset, position)`` of the nearest indexed batch at or before ``offset``.

        ``(base_offset, 0)`` when no entry is that low: scanning from the segment start is
        always correct.
        """
        entry = self._floor(offset - self.base_offset)
        if entry is None:
            return self.base_offset, 0
        return entry[0] + self.base_offset, entry[1]

    def position_floor(self, position: int) -> int:
        """The largest indexed batch position <= ``position`` (0 if none)."""
        values = self._values
        i = bisect.bisect_right(values, position) - 1
        return values[i] if i >= 0 else 0

    def truncate_to_position(self, position: int) -> None:
        """Drops entries at or past ``position`` (the log was cut there)."""
        self.truncate_entries(bisect.bisect_left(self._values, position))

    def entries(self) -> list[tuple[int, int]]:
        """All entries as absolute ``(offset, position)``; for recovery checks and tests."""
        return [(k + self.base_offset, v) for k, v in zip(self._keys, self._values, strict=False)]
