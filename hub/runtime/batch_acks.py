"""Where each record of one ``SourceRecordBatch`` landed, for ``SourceTask.commit_batch``.

The worker produces a batch through one shared delivery callback per poll result
(``SubmittedBatch.on_delivery``); a task that overrides ``commit_batch`` gets one more, per
batch, that also notes each record's Kafka offset and hands the batch and its offsets to the
task once every record of it is acknowledged.

Two ways to map an acknowledgement to its record:

- ``on_delivery`` (columnar path): the batch names its partition and every record is produced,
  in order, to that one partition, so the i-th acknowledgement is record i's (the producer
  reports a partition's deliveries in produce order; the worker's producer is idempotent, so a
  retry cannot reorder them).
- ``callback(i)`` (record path: transforms, converters that must run per record, a batch
  without a partition): a closure per record, which costs an object per record and is only
  used where the record path costs more anyway. A record that was not produced (dropped by
  a transform, skipped under ``errors.tolerance=all``) keeps the offset None and is not
  counted in ``seal``'s total.

Threads: ``seal`` runs on the task thread, the callbacks on the producer's callback thread.
Acknowledgements are counted with ``itertools.count`` (atomic in CPython); completion, which
either thread may see first, takes the lock once and calls the hook exactly once. A failed
delivery never completes the batch (the task fails on it).
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from hub.api import SourceRecordBatch

log = logging.getLogger(__name__)

Hook = Callable[[SourceRecordBatch, Sequence[int | None]], None]


class BatchAcks:
    __slots__ = ("_acks", "_done", "_forward", "_hook", "_lock", "_log_extra", "acked", "failed",
                 "item", "offsets", "produced", "sealed")  # fmt: skip

    def __init__(
        self,
        item: SourceRecordBatch,
        hook: Hook,
        forward: Callable[[Any, Any], None],
        log_extra: dict[str, Any],
    ) -> None:
        """``forward`` is the poll result's shared callback, called first for every record."""
        self.item = item
        self.offsets: list[int | None] = [None] * len(item)
        self._hook = hook
        self._forward = forward
        self._log_extra = log_extra
        self._acks = itertools.count(1)
        self._lock = threading.Lock()
        self._done = False
        self.acked = 0
        self.produced = 0
        self.sealed = False
        self.failed = False

    def on_delivery(self, err: Any, msg: Any) -> None:
        """Columnar path: the n-th acknowledgement belongs to record n (see the module doc)."""
        if err is not None:
            self.failed = True
            self._forward(err, msg)
            return
        acked = self.acked = next(self._acks)
        self.offsets[acked - 1] = msg.offset()
        if self.sealed and acked == self.produced:
            self._complete()
        self._forward(err, msg)  # after the hook: see ``_complete``

    def callback(self, index: int) -> Callable[[Any, Any], None]:
        """Record path: the delivery callback of record ``index``."""

        def on_delivery(err: Any, msg: Any) -> None:
            if err is not None:
                self.failed = True
                self._forward(err, msg)
                return
            self.offsets[index] = msg.offset()
            acked = self.acked = next(self._acks)
            if self.sealed and acked == self.produced:
                self._complete()
            self._forward(err, msg)

        return on_delivery

    def seal(self, produced: int) -> None:
        """Every record was handed to the producer (``produced`` of them) or skipped."""
        self.produced = produced
        self.sealed = True
        if self.acked == produced:  # acknowledged before it was sealed (or nothing produced)
            self._complete()

    def _complete(self) -> None:
        """Calls the hook once. Always before the poll result's own accounting hears of the
        batch's last acknowledgement (the callbacks forward after this, and ``seal`` comes
        before the poll result is sealed), so the batch's source offsets cannot be committed,
        nor ``SourceTask.commit`` called for them, before the task saw the batch's offsets."""
        with self._lock:
            if self._done or self.failed:
                return
            self._done = True
        try:
            self._hook(self.item, self.offsets)
        except Exception:
            log.exception("commit_batch failed", extra=self._log_extra)
