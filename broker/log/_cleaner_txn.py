"""What compaction must know about transactions (Kafka's rules, KIP-98).

- Records of *aborted* transactions are never visible to ``read_committed`` readers, so the
  cleaner removes them (and never lets them win a key in the offset map). Which batches are
  aborted comes from the transaction indexes: a transactional batch of producer P at offset O
  is aborted if P has an entry with ``first_offset <= O <= last_offset``.
- Open transactions are never cleaned: the cleaner stops below the last stable offset, so
  every transaction with data in the cleaned range is decided.
- A marker (control batch) stays while any data of its transaction is left in the log: the
  producer state rebuilt by replay must see the transaction end, or the LSO would stick. Once
  its transaction has no data left it is dropped after ``delete.retention.ms`` from its own
  timestamp, like a tombstone, so a consumer reading within that time still sees it. With it
  goes its transaction-index entry: an entry whose marker is gone would make a consumer
  treat the producer's later batches as aborted.

The cleaner walks its range in offset order; ``TxnRetention`` carries, per producer, whether
the transaction being walked kept any data, across segments.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from broker.log.segment import Segment

_NEVER = 2**63 - 1


class AbortedRanges:
    """Aborted transactions of a partition by producer id, from every transaction index."""

    def __init__(self, segments: Iterable[Segment]) -> None:
        by_pid: dict[int, list[tuple[int, int]]] = {}
        for segment in segments:
            for txn in segment.txn_index.entries:
                by_pid.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))
        self._firsts = {pid: [r[0] for r in sorted(rs)] for pid, rs in by_pid.items()}
        self._lasts = {pid: [r[1] for r in sorted(rs)] for pid, rs in by_pid.items()}

    def __bool__(self) -> bool:
        return bool(self._firsts)

    def is_aborted(self, producer_id: int, offset: int) -> bool:
        firsts = self._firsts.get(producer_id)
        if not firsts:
            return False
        i = bisect.bisect_right(firsts, offset) - 1
        return i >= 0 and offset <= self._lasts[producer_id][i]


class TxnRetention:
    """Marker decisions while walking the cleanable range in offset order."""

    def __init__(self, now_ms: int, delete_retention_ms: int) -> None:
        self._now = now_ms
        self._retention = delete_retention_ms
        self._has_data: dict[int, bool] = {}

    def kept_data(self, producer_id: int) -> None:
        """A transactional batch of ``producer_id`` keeps records (or its header)."""
        self._has_data[producer_id] = True

    def keep_marker(self, producer_id: int, timestamp: int) -> tuple[bool, int]:
        """(keep this marker?, when to look again if it is kept only for its time left)."""
        has_data = self._has_data.pop(producer_id, False)
        if has_data:
            return True, _NEVER
        expires = timestamp + self._retention
        if self._now > expires:
            return False, _NEVER
        return True, expires + 1
