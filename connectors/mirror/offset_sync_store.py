"""Translates a consumer group's upstream offset to the target, never past what was proven.

Kafka's ``OffsetSyncStore``. The offset syncs of a partition (``wire.OffsetSync``: upstream U
was written downstream at D) are kept in 64 slots, newest first, spaced exponentially: slot
``j`` holds a sync no more than about ``2**j`` upstream offsets older than slot 0's, and slots
are kept apart so the 64 cover the whole topic (invariants B and C below). Translating a
committed upstream offset O takes the newest sync S with ``S.upstream <= O``:

- O == S.upstream: the group consumed exactly up to the synced record, so D is exact;
- O > S.upstream: records between S and O may or may not have been mirrored yet, so the
  translation is S.downstream + 1 (just past the proven record): the group re-reads what came
  after S on the target, and never skips a record;
- no sync at or before O (the group is behind every kept sync): -1, "cannot translate".

Nothing is translated before the syncs topic was read to its end once, so a restarted task does
not emit checkpoints from stale syncs. While that first read runs with ``read_to_end_first``
(used when the checkpoints topic could not be read), each sync replaces the whole array, so
translations never go backwards compared to checkpoints emitted before the restart.

Threads: a reader thread applies syncs; ``translate`` runs on the task's thread. Each update
builds a new array and swaps it in (readers never see a half-updated one).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from connectors.mirror.errors import WireError
from connectors.mirror.wire import OffsetSync

log = logging.getLogger(__name__)

SLOTS = 64


def _recent(newer: OffsetSync, older: OffsetSync, i: int, j: int) -> bool:
    """Invariant B for slots i < j: ``older`` is at most 2**j - 2**i offsets behind."""
    bound = older.upstream + (1 << j) - (1 << i)
    return newer is older or bound < 0 or newer.upstream <= bound


def _apart(newer: OffsetSync, older: OffsetSync, i: int) -> bool:
    """Invariant C: slot i+1 is at least 2**max(i-2, 0) offsets behind slot i."""
    bound = older.upstream + (1 << max(i - 2, 0))
    return newer is older or (bound >= 0 and newer.upstream >= bound)


def updated(slots: list[OffsetSync], sync: OffsetSync) -> list[OffsetSync]:
    """A new slot array with ``sync`` as the newest, invariants repaired (Kafka's algorithm:
    reuse older entries where they still fit, so more distinct syncs survive)."""
    if sync.upstream < slots[0].upstream:
        return [sync] * SLOTS  # upstream rewind: every older sync is void
    original = slots
    out = list(slots)
    out[0] = replacement = sync
    index = 0  # into ``original``: the next older entry to consider reusing
    for current in range(1, SLOTS):
        previous = current - 1
        while True:
            old = original[index]
            recent = _recent(out[previous], old, previous, current)
            apart_before = _apart(out[previous], old, previous)
            after = current + 1
            apart_after = after >= SLOTS or _apart(old, out[after], current)
            duplicate = index + 1 < SLOTS and old is original[index + 1]
            promote = recent and apart_before and apart_after
            if promote:
                replacement = old
            skip = duplicate or not apart_before
            if promote or skip:
                index += 1
            if not (index < current and skip):
                break
        if _recent(out[previous], out[current], previous, current):
            break  # B holds here, so it holds for every older slot too
        out[current] = replacement
    return out


def lookup(slots: list[OffsetSync], upstream: int) -> OffsetSync:
    """The newest sync with ``upstream <= upstream`` (or the oldest kept)."""
    for sync in slots:
        if sync.upstream <= upstream:
            return sync
    return slots[-1]


class OffsetSyncStore:
    def __init__(self, settings: Mapping[str, str], topic: str, log_extra: dict[str, Any]) -> None:
        self.topic = topic
        self.log_extra = log_extra
        self.read_to_end_first = False
        self.ready = threading.Event()
        self.syncs: dict[tuple[str, int], list[OffsetSync]] = {}
        self._settings = dict(settings)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, read_to_end_first: bool) -> None:
        self.read_to_end_first = read_to_end_first
        self._thread = threading.Thread(target=self._run, name=f"offset-syncs-{self.topic}")
        self._thread.daemon = True
        self._thread.start()

    def translate(self, topic: str, partition: int, upstream: int) -> int | None:
        """The downstream offset to resume at, -1 if ``upstream`` is older than every kept
        sync, None if nothing is known (yet) about the partition."""
        if not self.ready.is_set():
            return None
        slots = self.syncs.get((topic, partition))
        if slots is None:
            return None
        sync = lookup(slots, upstream)
        if sync.upstream > upstream:
            return -1
        return sync.downstream + (0 if sync.upstream == upstream else 1)

    def apply(self, sync: OffsetSync) -> None:
        key = (sync.topic, sync.partition)
        slots = self.syncs.get(key)
        if slots is None or (self.read_to_end_first and not self.ready.is_set()):
            self.syncs[key] = [sync] * SLOTS
        else:
            self.syncs[key] = updated(slots, sync)

    def _run(self) -> None:
        try:
            consumer = Consumer(self._settings)
        except KafkaException as exc:
            log.error("offset syncs reader failed", extra={**self.log_extra, "error": str(exc)})
            return
        try:
            self._read(consumer)
        except Exception:
            log.exception("offset syncs reader failed", extra=self.log_extra)
        finally:
            consumer.close()

    def _read(self, consumer: Consumer) -> None:
        end = None
        while end is None and not self._stopping.is_set():
            try:
                _, end = consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=5)
            except KafkaException as exc:
                log.warning("offset syncs topic not readable yet",
                            extra={**self.log_extra, "error": str(exc)})  # fmt: skip
                self._stopping.wait(1.0)
        consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
        if end == 0:
            self.ready.set()
        partition = [TopicPartition(self.topic, 0)]
        while not self._stopping.is_set():
            messages = consumer.consume(1000, 0.2)
            if not messages and not self.ready.is_set() and end is not None:
                position = consumer.position(partition)[0].offset
                if position >= end:
                    self.ready.set()
            for message in messages:
                if message.error() is not None:
                    continue
                try:
                    self.apply(OffsetSync.decode(message.key() or b"", message.value() or b""))
                except WireError as exc:
                    log.warning("ignored a malformed offset sync",
                                extra={**self.log_extra, "offset": message.offset(),
                                       "error": str(exc)})  # fmt: skip
                if end is not None and (message.offset() or 0) + 1 >= end:
                    self.ready.set()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5)
