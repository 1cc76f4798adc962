"""Committed offsets of every group: an in-memory map backed by ``__consumer_offsets``.

The map is the read path (OffsetFetch never touches the log); the topic is the durable copy.
A commit is written first and applied to the map only once the append succeeded, so a fetch
never returns an offset that a restart would forget. Deletes write tombstones the same way.

Who may commit (generation and member checks) is the group's business and is decided by the
coordinator before it calls :meth:`OffsetManager.commit`; this class only stores.

Transactional offsets (TxnOffsetCommit, KIP-98) are written as a transactional batch of the
producer and kept *pending* per producer id; OffsetFetch does not return them (with
``require_stable`` it answers UNSTABLE_OFFSET_COMMIT for them) until the transaction's marker
in the same ``__consumer_offsets`` partition commits them; an abort drops them. A pending
offset applied at commit time replaces the committed one only if it was appended after it
(Kafka's rule: the log order of the two writes decides, not the order of the marker), which
is why each committed offset remembers its log position.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from broker.coordinator.offsets_topic import OffsetsTopic
from broker.coordinator.records import OffsetKey, OffsetValue, decode_offset, encode_offset

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


class OffsetManager:
    """Committed offsets per group and partition."""

    def __init__(self, topic: OffsetsTopic) -> None:
        self._topic = topic
        self._offsets: dict[str, dict[TopicPartition, OffsetValue]] = {}
        self._positions: dict[str, dict[TopicPartition, int]] = {}  # log offset of each commit
        # producer id -> group -> partition -> (offset value, log offset of its record)
        self._pending: dict[int, dict[str, dict[TopicPartition, tuple[OffsetValue, int]]]] = {}

    def load_record(
        self, key: OffsetKey, value: bytes | None, position: int = -1, producer_id: int = -1
    ) -> None:
        """Applies one replayed record (the newest record per key wins); a transactional one
        (``producer_id`` >= 0) waits for its marker (``complete_transaction``)."""
        tp = (key.topic, key.partition)
        if producer_id >= 0:
            if value is not None:
                try:
                    pending = (decode_offset(value), position)
                except (ValueError, UnicodeDecodeError):
                    return
                self._pending.setdefault(producer_id, {}).setdefault(key.group, {})[tp] = pending
            return
        self._positions.setdefault(key.group, {})[tp] = position
        if value is None:
            group = self._offsets.get(key.group)
            if group is not None:
                group.pop(tp, None)
                if not group:
                    del self._offsets[key.group]
            return
        try:
            self._offsets.setdefault(key.group, {})[tp] = decode_offset(value)
        except (ValueError, UnicodeDecodeError) as exc:
            log.warning(
                "group %s: unreadable committed offset for %s-%d: %s",
                key.group,
                key.topic,
                key.partition,
                exc,
            )

    def forget_groups(self, group_ids: Iterable[str]) -> None:
        """Drops groups from memory only (their offsets partition moved to another broker)."""
        for group_id in list(group_ids):
            self._offsets.pop(group_id, None)
            self._positions.pop(group_id, None)
            for groups in self._pending.values():
                groups.pop(group_id, None)

    def groups(self) -> set[str]:
        return set(self._offsets)

    def has_offsets(self, group_id: str) -> bool:
        return bool(self._offsets.get(group_id))

    def commit(self, group_id: str, offsets: Mapping[TopicPartition, OffsetValue]) -> None:
        """Durably stores the offsets as one batch; raises the storage error if that fails."""
        entries = [
            (OffsetKey(group_id, topic, partition), encode_offset(value))
            for (topic, partition), value in offsets.items()
        ]
        last = self._topic.append(group_id, entries)
        self._offsets.setdefault(group_id, {}).update(offsets)
        self._positions.setdefault(group_id, {}).update(dict.fromkeys(offsets, last))
        log.debug("group %s: committed %d offsets", group_id, len(entries))

    def commit_transactional(
        self, group_id: str, producer_id: int, producer_epoch: int,
        offsets: Mapping[TopicPartition, OffsetValue],
    ) -> None:  # fmt: skip
        """Appends the offsets as the producer's transactional batch; pending until its
        marker. Raises the storage error (INVALID_PRODUCER_EPOCH for a fenced producer)."""
        entries = [
            (OffsetKey(group_id, topic, partition), encode_offset(value))
            for (topic, partition), value in offsets.items()
        ]
        last = self._topic.append(group_id, entries, producer=(producer_id, producer_epoch))
        group = self._pending.setdefault(producer_id, {}).setdefault(group_id, {})
        group.update({tp: (value, last) for tp, value in offsets.items()})

    def complete_transaction(self, producer_id: int, partition: int, commit: bool) -> set[str]:
        """A marker of ``producer_id`` in offsets partition ``partition``: its pending offsets
        of the groups there are committed or dropped; returns the groups committed to."""
        groups = self._pending.get(producer_id)
        if not groups:
            return set()
        done = {g for g in groups if self._topic.partition_for(g) == partition}
        for group_id in done:
            pending = groups.pop(group_id)
            if not commit:
                continue
            stored = self._offsets.setdefault(group_id, {})
            positions = self._positions.setdefault(group_id, {})
            for tp, (value, position) in pending.items():
                if position > positions.get(tp, -1):
                    stored[tp] = value
                    positions[tp] = position
        if not groups:
            del self._pending[producer_id]
        return done if commit else set()

    def pending(self, group_id: str) -> set[TopicPartition]:
        """Partitions of ``group_id`` with a transactional offset not yet committed."""
        out: set[TopicPartition] = set()
        for groups in self._pending.values():
            out.update(groups.get(group_id, ()))
        return out

    def fetch(
        self, group_id: str, partitions: Iterable[TopicPartition] | None
    ) -> dict[TopicPartition, OffsetValue | None]:
        """Committed offsets (None where none is committed); every one if partitions is None."""
        stored = self._offsets.get(group_id, {})
        if partitions is None:
            return dict(stored)
        return {tp: stored.get(tp) for tp in partitions}

    def delete(self, group_id: str, partitions: Iterable[TopicPartition] | None = None) -> int:
        """Tombstones the given (or all) committed offsets of a group; returns how many."""
        stored = self._offsets.get(group_id, {})
        doomed = [tp for tp in (stored if partitions is None else partitions) if tp in stored]
        self._topic.append(group_id, [(OffsetKey(group_id, t, p), None) for t, p in doomed])
        positions = self._positions.get(group_id, {})
        for tp in doomed:
            del stored[tp]
            positions.pop(tp, None)
        if not stored:
            self._offsets.pop(group_id, None)
        return len(doomed)

    def expire(self, group_id: str, now_ms: int, retention_ms: int, empty_since: int | None) -> int:
        """Deletes offsets past retention (Kafka's KIP-211 rule); returns how many.

        A consumer group's offsets age from the moment it became empty (``empty_since``), so
        a group idle for a week keeps them while it has members; a group that only stores
        offsets (no protocol) ages each offset from its own commit.
        """
        stored = self._offsets.get(group_id, {})
        doomed = [
            tp
            for tp, value in stored.items()
            if now_ms - (value.commit_timestamp if empty_since is None else empty_since)
            >= retention_ms
        ]
        if doomed:
            log.info("group %s: %d committed offsets expired", group_id, len(doomed))
        return self.delete(group_id, doomed) if doomed else 0
