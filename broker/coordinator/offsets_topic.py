"""The internal compacted topic ``__consumer_offsets``: where group state survives restarts.

Every committed offset and every group's metadata (generation, protocol, members and their
assignments) is a record keyed as in ``records.py``; the newest record per key wins and a
null value (tombstone) deletes the key, which is exactly what log compaction keeps, so the
topic stays about as large as the live state. A group always maps to the same partition
(Kafka's ``abs(javaHashCode(group)) % partitions``), so its records stay in commit order.

Crash behaviour: a commit is acknowledged only after its batch is appended; the append goes
to the page cache, which survives the broker process being killed. Loading replays every
partition from its log start, so whatever the log's recovery kept is exactly the state
clients were told about.

The partition count is fixed when the topic is first created
(``offsets_topic_num_partitions``); an existing topic keeps its count, because changing it
would move groups to other partitions and lose their order.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from broker.coordinator.records import GroupKey, OffsetKey, decode_key, encode_key
from broker.errors import UnknownTopicOrPartitionError
from broker.log.records import Record, build_batch, decode_batches

if TYPE_CHECKING:
    from broker.log.log_manager import LogManager

log = logging.getLogger(__name__)

TOPIC = "__consumer_offsets"
TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)}
_READ_CHUNK = 4 * 1024 * 1024


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` of Java, over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    raw = text.encode("utf-16-be")
    for i in range(0, len(raw), 2):
        h = (31 * h + ((raw[i] << 8) | raw[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group_id: str, partitions: int) -> int:
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class OffsetsTopic:
    """Creates, replays and appends to ``__consumer_offsets`` through the LogManager."""

    def __init__(self, logs: LogManager, default_partitions: int) -> None:
        self._logs = logs
        self._default_partitions = max(1, default_partitions)
        self.partitions = 0

    def open(self) -> None:
        """Creates the topic on first start; otherwise keeps its existing partition count."""
        existing = self._logs.topics().get(TOPIC)
        if existing is None:
            info = self._logs.create_topic(TOPIC, self._default_partitions, TOPIC_CONFIGS)
            log.info("created %s with %d partitions", TOPIC, info.partitions)
            self.partitions = info.partitions
        else:
            self.partitions = existing.partitions

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.partitions)

    def replay(self) -> Iterator[tuple[OffsetKey | GroupKey, bytes | None]]:
        """Yields every (key, value) in log order per partition; unknown keys are skipped."""
        for partition in range(self.partitions):
            try:
                plog = self._logs.log(TOPIC, partition)
            except UnknownTopicOrPartitionError:
                continue
            offset, end = plog.log_start_offset, plog.log_end_offset
            while offset < end:
                result = plog.read(offset, _READ_CHUNK, upper_bound=end)
                if not result.chunks:
                    break
                data = b"".join(bytes(c) for c in result.chunks)
                next_offset = offset
                for batch in decode_batches(data):
                    next_offset = max(next_offset, batch.last_offset + 1)
                    if batch.is_control:
                        continue
                    for rec in batch.records:
                        if rec.offset < offset or rec.key is None:
                            continue
                        try:
                            key = decode_key(rec.key)
                        except (ValueError, UnicodeDecodeError):
                            log.warning(
                                "%s-%d: skipping unreadable key at offset %d",
                                TOPIC,
                                partition,
                                rec.offset,
                            )
                            continue
                        yield key, rec.value
                if next_offset <= offset:
                    break
                offset = next_offset

    def append(
        self, group_id: str, entries: Sequence[tuple[OffsetKey | GroupKey, bytes | None]]
    ) -> None:
        """Appends the entries of one group as one batch (all or nothing).

        Raises the storage's BrokerError if the append fails; callers turn it into the
        error code of the request that caused the write.
        """
        if not entries:
            return
        now = int(time.time() * 1000)
        records = [
            Record(offset=i, timestamp=now, key=encode_key(key), value=value)
            for i, (key, value) in enumerate(entries)
        ]
        plog = self._logs.log(TOPIC, self.partition_for(group_id))
        info = plog.append(build_batch(records))
        plog.set_high_watermark(info.last_offset + 1)
