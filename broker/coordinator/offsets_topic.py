"""The internal compacted topic ``__consumer_offsets``: where group state survives restarts.

Every committed offset and every group's metadata (generation, protocol, members and their
assignments) is a record keyed as in ``records.py``; the newest record per key wins and a
null value (tombstone) deletes the key, which is exactly what log compaction keeps, so the
topic stays about as large as the live state. A group always maps to the same partition
(Kafka's ``abs(javaHashCode(group)) % partitions``), so its records stay in commit order.

Transactional offsets (TxnOffsetCommit) are appended as a transactional batch of the
producer; the transaction's marker in the same partition later commits or drops them, on the
live path (``GroupCoordinator.complete_transaction``) and on replay alike (``TxnMarkerSeen``).

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
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from kio.schema.errors import ErrorCode

from broker.coordinator.records import GroupKey, OffsetKey, decode_key, encode_key
from broker.errors import BrokerError, UnknownTopicOrPartitionError
from broker.log.batch import iter_batches
from broker.log.markers import read_marker
from broker.log.records import DecodedBatch, Record, build_batch, decode_batches

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


class ReplayRecord(NamedTuple):
    """One keyed record of ``__consumer_offsets`` in log order."""

    key: OffsetKey | GroupKey
    value: bytes | None
    offset: int
    producer_id: int  # the transaction's producer (TxnOffsetCommit); -1 if not transactional


class TxnMarkerSeen(NamedTuple):
    """A transaction marker in an offsets partition: that producer's pending offsets there
    become committed (``commit``) or are dropped."""

    partition: int
    producer_id: int
    commit: bool


class ReplicatedOffsets(Protocol):
    """Cluster mode's replicated ``__consumer_offsets`` (``broker.cluster.groups``)."""

    def coordinates(self, partition: int) -> bool:
        """Whether this broker leads (and has loaded) that offsets partition."""

    def partition_count(self) -> int:
        """The topic's partition count in the cluster (0 before it exists)."""

    def append(self, partition: int, batch: bytes) -> int:
        """Appends as leader (raises a BrokerError when not leading); the batch's last offset."""

    async def wait(self, partition: int) -> ErrorCode:
        """Waits until every append so far to ``partition`` is replicated to the ISR."""


class OffsetsTopic:
    """Creates, replays and appends to ``__consumer_offsets`` through the LogManager."""

    def __init__(
        self, logs: LogManager, default_partitions: int,
        replicated: ReplicatedOffsets | None = None,
    ) -> None:  # fmt: skip
        self._logs = logs
        self._default_partitions = max(1, default_partitions)
        self._replicated = replicated
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

    def replay(
        self, partitions: Iterable[int] | None = None
    ) -> Iterator[ReplayRecord | TxnMarkerSeen]:
        """Every keyed record and transaction marker in log order per partition; unknown keys
        are skipped."""
        for partition in range(self.partitions) if partitions is None else partitions:
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
                for pos, header in iter_batches(data):
                    next_offset = max(next_offset, header.last_offset + 1)
                    if header.last_offset < offset:
                        continue
                    raw = data[pos : pos + header.size]
                    if header.is_control:
                        if header.producer_id >= 0:
                            marker = _marker(raw, partition)
                            if marker is not None:
                                yield TxnMarkerSeen(partition, header.producer_id, marker)
                        continue
                    batch = _decode(raw, partition)
                    if batch is None:
                        continue
                    pid = batch.producer_id if batch.is_transactional else -1
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
                        yield ReplayRecord(key, rec.value, rec.offset, pid)
                if next_offset <= offset:
                    break
                offset = next_offset

    def append(
        self,
        group_id: str,
        entries: Sequence[tuple[OffsetKey | GroupKey, bytes | None]],
        producer: tuple[int, int] | None = None,
    ) -> int:
        """Appends the entries of one group as one batch (all or nothing); returns the
        batch's last offset (-1 if there was nothing to write).

        ``producer`` (id, epoch) makes it a transactional batch of that producer
        (TxnOffsetCommit): the partition then tracks the transaction until its marker.
        Raises the storage's BrokerError if the append fails (a fenced producer epoch
        included); callers turn it into the error code of the request that caused the write.
        """
        if not entries:
            return -1
        now = int(time.time() * 1000)
        records = [
            Record(offset=i, timestamp=now, key=encode_key(key), value=value)
            for i, (key, value) in enumerate(entries)
        ]
        pid, epoch = producer if producer is not None else (-1, -1)
        batch = build_batch(
            records, producer_id=pid, producer_epoch=epoch, is_transactional=producer is not None
        )
        if self._replicated is not None:
            return self._replicated.append(self.partition_for(group_id), batch)
        plog = self._logs.log(TOPIC, self.partition_for(group_id))
        info = plog.append(batch)
        plog.set_high_watermark(info.last_offset + 1)
        return info.last_offset


def _marker(raw: bytes, partition: int) -> bool | None:
    """A control batch's commit flag (None if unreadable: logged, skipped)."""
    try:
        return read_marker(raw).commit
    except BrokerError as exc:
        log.error(
            "skipping an unreadable transaction marker while loading group state",
            extra={"partition": f"{TOPIC}-{partition}", "error": str(exc)},
        )
        return None


def _decode(raw: bytes, partition: int) -> DecodedBatch | None:
    try:
        return next(decode_batches(raw))
    except BrokerError as exc:
        log.error(
            "skipping an undecodable batch while loading group state",
            extra={"partition": f"{TOPIC}-{partition}", "error": str(exc)},
        )
        return None
