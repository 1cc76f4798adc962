"""The transactional side of PartitionLog: markers, the last stable offset and aborted ranges.

- ``append_marker`` writes the coordinator's commit/abort control batch (``markers``), closes
  the producer's open transaction and, for an abort of a transaction that wrote data here,
  appends its entry to the segment's ``.txnindex`` (``txn_index``). Markers go through the
  same stamping and segment append as data, under the log lock.
- ``last_stable_offset`` (LSO): where ``read_committed`` fetches and ListOffsets stop. Without
  transactions it is the high watermark, at the cost of one dict check.
- ``aborted_transactions``: what a ``read_committed`` Fetch response lists for the range it
  returns, read from the transaction indexes of the segments that range touches.
- ``_rebuild_producer_state``: on open and after truncation, load the producer snapshot, drop
  the transaction-index entries at or after its offset and rebuild them while replaying.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from broker.errors import StorageError
from broker.log.batch import read_header
from broker.log.markers import build_marker, read_marker
from broker.log.txn_index import AbortedTxn

if TYPE_CHECKING:
    from broker.log.producer_state import CompletedTxn, ProducerStateManager
    from broker.log.segment import Segment


class TxnMixin:
    # Provided by PartitionLog.
    _lock: threading.RLock
    _segments: tuple[Segment, ...]
    _log_start: int
    _hw: int
    _closed: bool
    _producers: ProducerStateManager
    hw_follows_leo: bool
    ident: str
    clock: Callable[[], int]

    def _write(self, records: bytes | memoryview, located: list[Any], leader_epoch: int,
               now: int) -> tuple[Segment, list[Any], int | None]:  # fmt: skip
        raise NotImplementedError

    @property
    def last_stable_offset(self) -> int:
        """First offset a ``read_committed`` consumer may not read yet (<= high watermark)."""
        hw = self._hw
        first = self._producers.first_unstable_offset(hw)
        if first is None or first >= hw:
            return hw
        return max(first, self._log_start)

    def append_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        *,
        leader_epoch: int = 0,
        now_ms: int | None = None,
    ) -> int:
        """Appends a transaction marker; returns its offset.

        Raises InvalidProducerEpochError / TransactionCoordinatorFencedError for a fenced
        marker (nothing is written), StorageError if the log is closed or the write fails.
        """
        with self._lock:
            if self._closed:
                raise StorageError(f"log {self.ident} is closed")
            self._producers.check_marker(producer_id, producer_epoch, coordinator_epoch)
            now = self.clock() if now_ms is None else now_ms
            data = build_marker(producer_id, producer_epoch, commit, coordinator_epoch, now)
            segment, positions, _ = self._write(data, [(0, read_header(data))], leader_epoch, now)
            offset: int = positions[0].base_offset
            done = self._producers.complete_txn(
                producer_id, producer_epoch, coordinator_epoch, offset, now, not commit
            )
            if done.aborted and done.had_data:
                self._index_abort(segment, done)
            if self.hw_follows_leo and self._hw_moves_on_append():
                self._hw = segment.next_offset
            return offset

    def _hw_moves_on_append(self) -> bool:
        raise NotImplementedError

    def _apply_replicated_marker(
        self, batch: bytes | memoryview, base_offset: int, segment: Segment
    ) -> None:
        """A follower (or replay) stored a marker: close the transaction as the leader did."""
        head = read_header(batch)
        marker = read_marker(batch)
        done = self._producers.complete_txn(
            head.producer_id, head.producer_epoch, marker.coordinator_epoch, base_offset,
            head.max_timestamp, not marker.commit,
        )  # fmt: skip
        if done.aborted and done.had_data:
            self._index_abort(segment, done)

    def _index_abort(self, segment: Segment, done: CompletedTxn) -> None:
        segment.txn_index.append(
            AbortedTxn(
                done.producer_id, done.first_offset, done.last_offset,
                self._producers.lso_after(done),
            )
        )  # fmt: skip

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions with data in ``[fetch_offset, upper_bound)``, oldest first.

        Walks the segments from the one holding ``fetch_offset`` until an entry shows that
        no transaction begun before ``upper_bound`` was still open (``TransactionIndex``),
        or to the end: a transaction may abort segments after its data.
        """
        segments = self._segments
        i = max(0, bisect.bisect_right(segments, fetch_offset, key=_base) - 1)
        found: list[AbortedTxn] = []
        for segment in segments[i:]:
            entries, complete = segment.txn_index.collect(fetch_offset, upper_bound)
            found.extend(entries)
            if complete:
                break
        return found

    def _rebuild_producer_state(self) -> None:
        producers = self._producers
        segments = self._segments
        start = producers.load(segments[-1].next_offset)
        if start is None:
            start = segments[0].base_offset
        for segment in segments:
            if segment.next_offset > start or segment.base_offset >= start:
                segment.txn_index.truncate_to(start)
        producers.replay(segments, start, self._index_abort)

    def producer_states(self) -> list[dict[str, int]]:
        """Active producers of this partition (DescribeProducers), newest state per id."""
        with self._lock:
            return [
                {
                    "producer_id": pid,
                    "producer_epoch": e.epoch,
                    "last_sequence": e.last_seq,
                    "last_timestamp": e.last_timestamp,
                    "coordinator_epoch": e.coordinator_epoch,
                    "current_txn_start_offset": e.txn_first_offset,
                }
                for pid, e in self._producers.producers.items()
            ]


def _base(segment: Segment) -> int:
    return segment.base_offset
