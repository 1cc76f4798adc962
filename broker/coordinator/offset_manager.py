"""Committed offsets of every group: an in-memory map backed by ``__consumer_offsets``.

The map is the read path (OffsetFetch never touches the log); the topic is the durable copy.
A commit is written first and applied to the map only once the append succeeded, so a fetch
never returns an offset that a restart would forget. Deletes write tombstones the same way.

Who may commit (generation and member checks) is the group's business and is decided by the
coordinator before it calls :meth:`OffsetManager.commit`; this class only stores.
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

    def load_record(self, key: OffsetKey, value: bytes | None) -> None:
        """Applies one replayed record (the newest record per key wins)."""
        tp = (key.topic, key.partition)
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
        self._topic.append(group_id, entries)
        self._offsets.setdefault(group_id, {}).update(offsets)
        log.debug("group %s: committed %d offsets", group_id, len(entries))

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
        for tp in doomed:
            del stored[tp]
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
