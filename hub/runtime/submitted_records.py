"""Which source offsets are safe to commit: Kafka Connect's ``SubmittedRecords``.

Records are submitted in poll order and acknowledged by the producer, possibly out of order
across topic partitions. For each *source* partition the committable offset is that of the
last record in the longest acknowledged prefix: committing anything beyond would let a crash
skip a record the broker never received. Filtered or tolerated-and-skipped records are
acknowledged at once (nothing will ever be produced for them).

Thread safety: ``submit`` and ``committable`` run on the task thread, ``ack`` on the
producer's callback thread; one lock guards everything and a condition on it wakes
``await_all``.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from hub.runtime.storage.offset_store import PartitionKey, partition_key


class SubmittedRecord:
    __slots__ = ("acked", "offset", "owner", "partition")

    def __init__(
        self, owner: SubmittedRecords, partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> None:
        self.owner = owner
        self.partition = partition
        self.offset = offset
        self.acked = False

    def ack(self) -> None:
        self.owner._ack(self)

    def on_delivery(self, err: Any, _msg: Any) -> None:
        """The producer's delivery callback (one bound method: no closure per record)."""
        if err is None:
            self.owner._ack(self)
        else:
            self.owner.error = str(err)


class SubmittedRecords:
    def __init__(self) -> None:
        # Per-record paths (submit, _ack) take the plain lock (a C-level context manager); the
        # condition shares it for await_all.
        self._mutex = threading.Lock()
        self._lock = threading.Condition(self._mutex)
        self._waiters = 0  # notify only when someone waits: acks are per record
        self._records: dict[PartitionKey, deque[SubmittedRecord]] = {}
        self._outstanding = 0
        self.error: str | None = None  # first failed delivery; the task fails on it
        self._keys: dict[tuple[tuple[str, Any], ...], PartitionKey] = {}

    def submit(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> SubmittedRecord:
        record = SubmittedRecord(self, partition, offset)
        key = self._key(partition)
        with self._mutex:
            queue = self._records.get(key)
            if queue is None:  # not setdefault: no throwaway deque per record
                queue = self._records[key] = deque()
            queue.append(record)
            self._outstanding += 1
        return record

    def _key(self, partition: Mapping[str, Any]) -> PartitionKey:
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

    def _ack(self, record: SubmittedRecord) -> None:
        with self._mutex:
            if not record.acked:
                record.acked = True
                self._outstanding -= 1
                if self._waiters:
                    self._lock.notify_all()

    @property
    def outstanding(self) -> int:
        with self._lock:
            return self._outstanding

    def committable(self) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
        """Removes each partition's acknowledged prefix; returns (partition, last offset)."""
        out = []
        with self._lock:
            for key in list(self._records):
                queue = self._records[key]
                last = None
                while queue and queue[0].acked:
                    last = queue.popleft()
                if last is not None and (last.partition or last.offset):
                    out.append((last.partition, last.offset))
                if not queue:
                    del self._records[key]
        return out

    def await_all(self, timeout: float) -> bool:
        """Waits until every submitted record is acknowledged; False at the deadline."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._waiters += 1
            try:
                while self._outstanding > 0:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._lock.wait(left)
            finally:
                self._waiters -= 1
        return True
