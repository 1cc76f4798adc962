"""LeaderEpochCache: which leader epoch began at which offset (KIP-101), per partition.

A replica that was cut off may hold records the new leader never had. Truncating to the high
watermark (the pre-KIP-101 rule) can lose committed records or keep divergent ones; instead each
replica remembers ``epoch -> start offset`` for every leader epoch in its log, and a follower
asks the leader (OffsetForLeaderEpoch, API 23) where its latest epoch ended in the *leader's*
log, then truncates to that point (KIP-279 also lets the answer be an older epoch, in which
case the follower takes the smaller of both end offsets of that epoch).

File ``leader-epoch-checkpoint`` in the partition directory, Kafka's text format::

    0            format version
    2            number of entries
    0 0          epoch start-offset, ascending in both
    3 1200

Rewritten atomically (temp file, fsync, rename) on every change; changes happen once per
leader change, never per record. Not thread-safe by itself: the owner (the partition log's
lock) serialises changes.
"""

from __future__ import annotations

import logging
from pathlib import Path

from broker.log._atomic import write_atomically

log = logging.getLogger(__name__)

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1


class LeaderEpochCache:
    """``(epoch, start offset)`` entries, ascending; see the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[tuple[int, int]] = self._load()

    def _load(self) -> list[tuple[int, int]]:
        try:
            lines = self.path.read_text().split("\n")
        except FileNotFoundError:
            return []
        try:
            count = int(lines[1])
            entries = [tuple(int(x) for x in line.split()) for line in lines[2 : 2 + count]]
        except (IndexError, ValueError):
            log.warning("%s is unreadable; starting with no leader epochs", self.path)
            return []
        return [(e[0], e[1]) for e in entries if len(e) == 2]

    def _save(self) -> None:
        body = "".join(f"{e} {o}\n" for e, o in self.entries)
        write_atomically(self.path, f"0\n{len(self.entries)}\n{body}".encode())

    @property
    def latest_epoch(self) -> int:
        return self.entries[-1][0] if self.entries else UNDEFINED_EPOCH

    def epoch_for_offset(self, offset: int) -> int:
        """The epoch whose range holds ``offset`` (the latest one for the log end)."""
        found = UNDEFINED_EPOCH
        for epoch, start in self.entries:
            if start > offset:
                break
            found = epoch
        return found

    def start_offset_of(self, epoch: int) -> int:
        for e, offset in self.entries:
            if e == epoch:
                return offset
        return UNDEFINED_OFFSET

    def assign(self, epoch: int, start_offset: int) -> None:
        """Records that ``epoch`` starts at ``start_offset`` (no-op for a known epoch).

        Entries at or past ``start_offset`` with a smaller epoch can only be left over from a
        log that was truncated without telling the cache; they are dropped to keep both
        columns ascending.
        """
        if epoch <= self.latest_epoch:
            return
        self.entries = [(e, o) for e, o in self.entries if o < start_offset]
        self.entries.append((epoch, start_offset))
        self._save()

    def end_offset_for(self, requested: int, log_end_offset: int) -> tuple[int, int]:
        """``(epoch, end offset)``: the largest known epoch <= ``requested`` and the offset
        where it ended (the next epoch's start, or the log end for the latest epoch).

        A requested epoch newer than any known gives (UNDEFINED, UNDEFINED); one older than the
        first known gives (requested, first start offset), as Kafka answers.
        """
        if requested == UNDEFINED_EPOCH or not self.entries:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if requested >= self.latest_epoch:
            if requested == self.latest_epoch:
                return requested, log_end_offset
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        floor: int | None = None
        for e, offset in self.entries:
            if e > requested:
                return (requested if floor is None else floor), offset
            floor = e
        return UNDEFINED_EPOCH, UNDEFINED_OFFSET  # unreachable: requested < latest

    def truncate_from_end(self, end_offset: int) -> None:
        """Forgets epochs starting at or after ``end_offset`` (the log was cut there)."""
        kept = [(e, o) for e, o in self.entries if o < end_offset]
        if kept != self.entries:
            self.entries = kept
            self._save()

    def truncate_from_start(self, start_offset: int) -> None:
        """Forgets epochs wholly before ``start_offset``; the one spanning it now starts there."""
        before = [(e, o) for e, o in self.entries if o <= start_offset]
        after = [(e, o) for e, o in self.entries if o > start_offset]
        kept = ([(before[-1][0], start_offset)] if before else []) + after
        if kept != self.entries:
            self.entries = kept
            self._save()

    def clear(self) -> None:
        if self.entries:
            self.entries = []
            self._save()
