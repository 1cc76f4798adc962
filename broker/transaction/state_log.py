"""``__transaction_state``: the compacted internal topic where the coordinator keeps every
transactional id's state (Kafka's design; ``records`` has the layout).

One record per state change, keyed by transactional id, so compaction keeps the newest state
of each id. A transactional id always maps to partition
``abs(javaHashCode(transactional_id)) % transaction.state.log.num.partitions``, and the
coordinator for an id is whoever leads that partition: a state change is durable (and may be
answered) once its append is (single node: written to the segment file; cluster: on the
ISR, acks=all).

Single node (``LocalTxnLog``): the topic is created on first use (the first FindCoordinator
or InitProducerId naming a transactional id), so a broker that never sees a transaction has
no such directories; an existing topic keeps its partition count. Cluster mode uses
``broker.transaction.cluster.ReplicatedTxnLog``, which appends through the replica manager.

Crash behaviour: an append lost in a crash was never acknowledged to anyone, and loading
replays each partition from its log start, so the coordinator restarts from exactly the
states it reported.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from kio.schema.errors import ErrorCode

from broker.errors import BrokerError, UnknownTopicOrPartitionError
from broker.log.batch import iter_batches
from broker.log.records import decode_batches

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.log.log_manager import LogManager

log = logging.getLogger(__name__)

TOPIC = "__transaction_state"
_READ_CHUNK = 4 * 1024 * 1024


def topic_configs(config: BrokerConfig, replication_factor: int = 1) -> dict[str, str]:
    """Kafka's enforced configs of the topic (compacted, uncompressed, min ISR <= RF; no
    unclean election, which here is a broker-wide setting only)."""
    return {
        "cleanup.policy": "compact",
        "compression.type": "uncompressed",
        "segment.bytes": str(config.transaction_state_log_segment_bytes),
        "min.insync.replicas": str(
            max(1, min(config.transaction_state_log_min_isr, replication_factor))
        ),
    }


class TxnLogBackend(Protocol):
    """Where ``__transaction_state`` lives: the local log (single node) or the cluster."""

    def partition_count(self) -> int:
        """The topic's partition count (0 before it exists)."""

    async def append(self, partition: int, batch: bytes) -> ErrorCode:
        """Appends as leader and waits until durable; an error code, never an exception."""

    def replay(self, partition: int) -> Iterator[tuple[bytes, bytes | None]]:
        """(key, value) of every record of the partition, in log order."""


def replay_log(logs: LogManager, partition: int) -> Iterator[tuple[bytes, bytes | None]]:
    """Every keyed record of one ``__transaction_state`` partition from its log start."""
    try:
        plog = logs.log(TOPIC, partition)
    except UnknownTopicOrPartitionError:
        return
    offset, end = plog.log_start_offset, plog.log_end_offset
    while offset < end:
        result = plog.read(offset, _READ_CHUNK, upper_bound=end)
        if not result.chunks:
            return
        data = b"".join(bytes(c) for c in result.chunks)
        next_offset = offset
        for pos, header in iter_batches(data):
            next_offset = max(next_offset, header.last_offset + 1)
            try:
                batch = next(decode_batches(data[pos : pos + header.size]))
            except BrokerError as exc:
                log.error(
                    "skipping an undecodable batch while loading transactions",
                    extra={"partition": f"{TOPIC}-{partition}", "error": str(exc)},
                )
                continue
            if batch.is_control:
                continue
            for rec in batch.records:
                if rec.offset >= offset and rec.key is not None:
                    yield rec.key, rec.value
        if next_offset <= offset:
            return
        offset = next_offset


class LocalTxnLog:
    """Single node: ``__transaction_state`` in this broker's LogManager."""

    def __init__(self, logs: LogManager, config: BrokerConfig) -> None:
        self._logs = logs
        self._config = config

    def exists(self) -> bool:
        return TOPIC in self._logs.topics()

    def create(self) -> int:
        """Creates the topic if missing; returns its partition count."""
        existing = self._logs.topics().get(TOPIC)
        if existing is not None:
            return int(existing.partitions)
        count = max(1, self._config.transaction_state_log_num_partitions)
        self._logs.create_topic(TOPIC, count, topic_configs(self._config))
        log.info("created %s", TOPIC, extra={"partitions": count})
        return count

    def partition_count(self) -> int:
        info = self._logs.topics().get(TOPIC)
        return int(info.partitions) if info is not None else 0

    async def append(self, partition: int, batch: bytes) -> ErrorCode:
        try:
            plog = self._logs.log(TOPIC, partition)
            info = plog.append(batch, now_ms=int(time.time() * 1000))
            if plog.flush_due:
                await asyncio.get_running_loop().run_in_executor(None, plog.flush)
            plog.set_high_watermark(info.last_offset + 1)
        except BrokerError as exc:
            log.error(
                "transaction state append failed",
                extra={"partition": f"{TOPIC}-{partition}", "error": str(exc)},
            )
            return coordinator_error(exc.error_code)
        return ErrorCode.none

    def replay(self, partition: int) -> Iterator[tuple[bytes, bytes | None]]:
        return replay_log(self._logs, partition)


def coordinator_error(code: ErrorCode) -> ErrorCode:
    """What a client is told when the state append fails (Kafka's mapping)."""
    if code in (
        ErrorCode.unknown_topic_or_partition,
        ErrorCode.not_enough_replicas,
        ErrorCode.not_enough_replicas_after_append,
        ErrorCode.request_timed_out,
    ):
        return ErrorCode.coordinator_not_available
    if code in (ErrorCode.not_leader_or_follower, ErrorCode.kafka_storage_error):
        return ErrorCode.not_coordinator
    return ErrorCode.unknown_server_error
