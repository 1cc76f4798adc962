"""Emits offset syncs: proof that upstream offset U of a partition was written downstream at D.

MirrorMaker 2's ``OffsetSyncWriter``, fed with every mirrored record's (upstream, downstream)
pair as the target acknowledges it. Per source partition a ``PartitionState`` decides when a
sync is due *now*: the first record of this task's lifetime, a gap in the upstream offsets
(compaction, transaction markers), a downstream rewind (the target topic was truncated or
recreated), or a downstream offset at least ``offset.lag.max`` past the last sync. Due syncs
go to ``pending`` (the latest per partition wins) and are produced while fewer than
``MAX_OUTSTANDING`` are in flight; every other record's pair is kept in ``delayed`` (latest
per partition) and promoted to ``pending`` on each offset commit, so a quiet partition's last
position is synced too.

Pairs arrive a batch at a time (``update``). A batch whose upstream and downstream offsets are
both contiguous (the common case) is decided arithmetically, without a step per record: after
the first record, a sync is due every ``offset.lag.max + 1`` records. Anything else goes record
by record, exactly as Kafka's ``PartitionState.update``.

Threads: ``update`` runs on the worker producer's callback thread or the task thread,
``promote`` and ``fire`` on the task thread; one lock guards the maps. Both ``update`` and the
task's ``poll`` serve this writer's producer callbacks, so a sync's slot is freed within one
batch of its acknowledgement (Kafka's producer frees it on its own I/O thread). Syncs go to
partition 0 of the offset-syncs topic through this writer's own producer (on the source
cluster by default).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from connectors.mirror.wire import OffsetSync

log = logging.getLogger(__name__)

# Kafka allows 10 syncs in flight; its producer frees a slot on its I/O thread the moment the
# broker answers, ours only when a thread serves the callbacks (each batch, each poll), so a
# slot stays taken longer and more are allowed, or due syncs would mostly be replaced by later
# ones (a group positioned before the first surviving sync cannot be translated at all).
MAX_OUTSTANDING = 100


class PartitionState:
    """Kafka's ``OffsetSyncWriter.PartitionState`` for one source partition."""

    __slots__ = ("last_sync", "max_lag", "previous_downstream", "previous_upstream")

    def __init__(self, max_lag: int) -> None:
        self.max_lag = max_lag
        self.previous_upstream = -1
        self.previous_downstream = -1
        self.last_sync = -1  # downstream offset of the last sync made due

    def update(self, upstream: int, downstream: int) -> bool:
        """True if a sync for this pair is due now."""
        due = (
            self.last_sync == -1
            or downstream - (self.last_sync + 1) >= self.max_lag
            or upstream - self.previous_upstream != 1
            or downstream < self.previous_downstream
        )
        if due:
            self.last_sync = downstream
        self.previous_upstream = upstream
        self.previous_downstream = downstream
        return due

    def due_in_run(self, upstream: int, downstream: int, n: int) -> list[int]:
        """Indexes of the due records among ``n`` contiguous pairs starting at
        (``upstream``, ``downstream``): the same answer as ``update`` called for each."""
        due = []
        if self.update(upstream, downstream):
            due.append(0)
        if n > 1:
            step = self.max_lag + 1
            # Record i (i >= 1) is due when downstream + i >= last_sync + 1 + max_lag.
            i = max(1, self.last_sync + step - downstream)
            while i < n:
                due.append(i)
                i += step
            if due and due[-1] > 0:
                self.last_sync = downstream + due[-1]
            self.previous_upstream = upstream + n - 1
            self.previous_downstream = downstream + n - 1
        return due


class OffsetSyncWriter:
    """Thread-safe (see the module docstring)."""

    def __init__(self, producer: Any, topic: str, max_lag: int, log_extra: dict[str, Any]) -> None:
        self.producer = producer
        self.topic = topic
        self.max_lag = max_lag
        self.log_extra = log_extra
        self.states: dict[tuple[str, int], PartitionState] = {}
        self.pending: dict[tuple[str, int], OffsetSync] = {}
        self.delayed: dict[tuple[str, int], OffsetSync] = {}
        self.outstanding = 0
        self.sent = 0
        self.closed = False
        self._lock = threading.Lock()

    def update(
        self, topic: str, partition: int, upstream: Sequence[int], downstream: Sequence[int | None]
    ) -> None:
        """The pairs of one acknowledged batch of ``topic``/``partition`` (upstream order).

        A None downstream offset (a record that was not written) is skipped, as Kafka skips
        a ``commitRecord`` without metadata."""
        n = len(upstream)
        if not n:
            return
        key = (topic, partition)
        self.producer.poll(0)  # frees the slots of acknowledged syncs (their callbacks)
        with self._lock:
            if self.closed:
                return
            state = self.states.get(key)
            if state is None:
                state = self.states[key] = PartitionState(self.max_lag)
            u0, d0 = upstream[0], downstream[0]
            d_last = downstream[-1]
            contiguous = (
                d0 is not None
                and d_last is not None
                and upstream[-1] - u0 == n - 1
                and d_last - d0 == n - 1
                and None not in downstream
            )
            if contiguous:
                assert d0 is not None
                due = state.due_in_run(u0, d0, n)
                syncs = [OffsetSync(topic, partition, u0 + i, d0 + i) for i in due]
                last = OffsetSync(topic, partition, u0 + n - 1, d0 + n - 1)
            else:
                syncs = []
                last = None
                for u, d in zip(upstream, downstream, strict=True):
                    if d is None:
                        continue
                    last = OffsetSync(topic, partition, u, d)
                    if state.update(u, d):
                        syncs.append(last)
            for sync in syncs:
                self.delayed.pop(key, None)
                self.pending[key] = sync
                self._fire_locked()
            if last is not None and (not syncs or syncs[-1] != last):
                self.delayed[key] = last

    def promote(self) -> None:
        """On each offset commit: every partition's latest pair becomes due."""
        with self._lock:
            self.pending.update(self.delayed)
            self.delayed.clear()
            self._fire_locked()

    def fire(self) -> None:
        with self._lock:
            self._fire_locked()

    def _fire_locked(self) -> None:
        while self.pending and self.outstanding < MAX_OUTSTANDING and not self.closed:
            key = next(iter(self.pending))
            sync = self.pending.pop(key)
            try:
                self.producer.produce(
                    self.topic, sync.value(), sync.key(), partition=0, on_delivery=self._delivered
                )
            except BufferError:
                self.pending.setdefault(key, sync)
                return
            self.outstanding += 1

    def _delivered(self, err: Any, _msg: Any) -> None:
        with self._lock:
            self.outstanding -= 1
            if err is None:
                self.sent += 1
        if err is not None:
            log.error("offset sync not written", extra={**self.log_extra, "error": str(err)})

    def poll(self) -> None:
        """Serves the producer's delivery callbacks (the task's poll loop calls it)."""
        self.producer.poll(0)
        if self.pending:
            self.fire()

    def close(self, timeout: float) -> None:
        with self._lock:
            self.closed = True
        self.producer.flush(timeout)
