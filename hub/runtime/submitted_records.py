"""Which source offsets are safe to commit, tracked per ``poll()`` batch, not per record.

Kafka Connect keeps one entry per submitted record. At hundreds of thousands of records per
second that bookkeeping (an object, a lock and a deque append per record, plus a lock per
acknowledgement) cost more than producing the record, so here the unit is the *batch*: the
records one ``poll()`` returned. For each batch the task thread counts the records it
produced and notes, per source partition, the offset of the batch's last record; the
producer's delivery callback only counts acknowledgements. A batch is *complete* when it is
sealed (every record handed to the producer, filtered or skipped) and every produced record
was acknowledged.

For each source partition the committable offset is the one noted by the last batch of the
longest complete prefix of the batches that touched that partition: committing anything
beyond would let a crash skip a record the broker never received. This is coarser than per
record (an offset becomes committable when its whole batch is acknowledged) and never less
safe. Filtered or tolerated-and-skipped records need no acknowledgement; their offsets count
with their batch.

Threads: ``begin``, ``seal`` and ``committable`` run on the task thread; ``on_delivery`` on
the one thread that serves the producer's callbacks (the worker's poll thread, or ``flush`` at
worker stop after that thread ended). Acknowledgements are counted without a lock
(``next()`` on an ``itertools.count`` is atomic in CPython); completing a batch takes the lock.
Complete batches are handed to ``on_complete`` (the task's ``commit_records`` hook) strictly in
``poll()`` order.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hub.runtime.storage.offset_store import PartitionKey, partition_key


class SubmittedBatch:
    """The records of one ``poll()``: produced count, acknowledgements, last offsets."""

    __slots__ = ("_acks", "acked", "complete", "deferred", "offsets", "owner", "produced",
                 "records", "sealed")  # fmt: skip

    def __init__(self, owner: SubmittedRecords) -> None:
        self.owner = owner
        self.produced = 0  # task thread only
        self._acks = itertools.count(1)
        self.acked = 0
        self.sealed = False
        self.complete = False
        # partition key -> (source partition, source offset) of the batch's last record there
        self.offsets: dict[PartitionKey, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        self.records: Sequence[Any] | None = None  # for the commit_records hook
        self.deferred: list[Callable[[], None]] | None = None  # exactly-once hook calls

    def defer(self, call: Callable[[], None]) -> None:
        """Keeps a task hook call (``commit_record``, ``commit_batch``) for after the commit."""
        if self.deferred is None:
            self.deferred = []
        self.deferred.append(call)

    def note(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        """Records that a record of ``partition`` at ``offset`` belongs to this batch."""
        self.offsets[self.owner.key(partition)] = (partition, offset)

    def on_delivery(self, err: Any, _msg: Any) -> None:
        """The producer's delivery callback, shared by every record of the batch."""
        if err is not None:
            self.owner.error = str(err)
            return
        acked = self.acked = next(self._acks)
        # ``sealed`` first: once it is True, ``produced`` is final.
        if self.sealed and acked == self.produced:
            self.owner._complete(self)


class SubmittedRecords:
    def __init__(self, on_complete: Callable[[Sequence[Any]], None] | None = None) -> None:
        self._mutex = threading.Lock()
        self._changed = threading.Condition(self._mutex)
        self._hook_lock = threading.Lock()  # hands complete batches out in poll() order
        self._on_complete = on_complete
        self._pending: dict[PartitionKey, deque[tuple[SubmittedBatch, Any, Any]]] = {}
        self._open: deque[SubmittedBatch] = deque()  # sealed, in poll order, not yet handed out
        self._incomplete = 0
        self.error: str | None = None  # first failed delivery; the task fails on it
        self._keys: dict[tuple[tuple[str, Any], ...], PartitionKey] = {}

    def begin(self) -> SubmittedBatch:
        return SubmittedBatch(self)

    def key(self, partition: Mapping[str, Any]) -> PartitionKey:
        """``partition_key`` (which sorts), memoised by the partition's items as given."""
        try:
            raw = tuple(partition.items())
            key = self._keys.get(raw)
        except TypeError:  # unhashable values (lists, nested objects): no memo
            return partition_key(partition)
        if key is None:
            if len(self._keys) > 10_000:
                self._keys.clear()
            key = self._keys[raw] = partition_key(partition)
        return key

    def seal(self, batch: SubmittedBatch, records: Sequence[Any] | None = None) -> None:
        """Every record of ``batch`` was produced, filtered or skipped; ``records`` (the poll
        result) goes to ``on_complete`` once the batch is complete."""
        if not batch.offsets and not batch.produced and records is None:
            return  # nothing to commit, nobody to tell
        batch.records = records
        with self._mutex:
            for key, (partition, offset) in batch.offsets.items():
                queue = self._pending.get(key)
                if queue is None:
                    queue = self._pending[key] = deque()
                queue.append((batch, partition, offset))
            self._open.append(batch)
            self._incomplete += 1
        batch.sealed = True
        if batch.acked == batch.produced:  # acknowledged before it was sealed (or empty)
            self._complete(batch)

    def _complete(self, batch: SubmittedBatch) -> None:
        with self._hook_lock:
            with self._mutex:
                if batch.complete:  # the task thread and the callback thread both saw it
                    return
                batch.complete = True
                self._incomplete -= 1
                ready = []
                while self._open and self._open[0].complete:
                    ready.append(self._open.popleft())
                self._changed.notify_all()
            if self._on_complete is not None:
                for done in ready:
                    if done.records is not None:
                        self._on_complete(done.records)
                        done.records = None

    @property
    def outstanding(self) -> int:
        """Sealed batches still waiting for acknowledgements."""
        with self._mutex:
            return self._incomplete

    def committable(self) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
        """Removes each partition's complete prefix; returns (partition, last offset)."""
        out = []
        with self._mutex:
            for key in list(self._pending):
                queue = self._pending[key]
                last = None
                while queue and queue[0][0].complete:
                    last = queue.popleft()
                if last is not None and (last[1] or last[2]):
                    out.append((last[1], last[2]))
                if not queue:
                    del self._pending[key]
        return out

    def await_all(self, timeout: float) -> bool:
        """Waits until every sealed batch is complete; False at the deadline."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._incomplete > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True
