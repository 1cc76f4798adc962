"""Appending one transaction marker to a partition this broker leads.

Used by the coordinator's marker writer for local partitions and by the WriteTxnMarkers
handler (key 27) for markers other coordinators send. The marker is durable like an acks=all
produce: single node, written to the segment file (and fsynced first if the topic's
``flush.messages`` policy says so); cluster, on the ISR before this returns. A marker on a
``__consumer_offsets`` partition then makes the group coordinator apply (commit) or drop
(abort) the producer's pending transactional offsets there, as Kafka does after the append.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kio.schema.errors import ErrorCode

from broker.coordinator.offsets_topic import TOPIC as OFFSETS_TOPIC
from broker.errors import BrokerError

log = logging.getLogger(__name__)

NEVER_FLUSH = 2**63 - 1


async def append_marker(
    broker: Any,
    topic: str,
    partition: int,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
) -> ErrorCode:
    """Writes the marker; an error code for the sender, never an exception."""
    try:
        if broker.cluster is not None:
            code = await _append_replicated(
                broker, topic, partition, producer_id, producer_epoch, commit, coordinator_epoch
            )
            if code != ErrorCode.none:
                return code
        else:
            plog = broker.logs.log(topic, partition)
            flushing = plog.config.flush_messages < NEVER_FLUSH
            plog.hw_follows_leo = not flushing
            plog.append_marker(producer_id, producer_epoch, commit, coordinator_epoch)
            if flushing and plog.flush_due:
                await asyncio.get_running_loop().run_in_executor(None, plog.flush)
            plog.set_high_watermark(plog.log_end_offset)
            broker.notifier.notify(topic, partition)
    except BrokerError as exc:
        log.info(
            "transaction marker refused",
            extra={"partition": f"{topic}-{partition}", "producer_id": producer_id,
                   "error": exc.error_code.name, "reason": str(exc)},
        )  # fmt: skip
        return exc.error_code
    if topic == OFFSETS_TOPIC and broker.coordinator is not None:
        broker.coordinator.complete_transaction(producer_id, partition, commit)
    return ErrorCode.none


async def _append_replicated(
    broker: Any, topic: str, partition: int, producer_id: int, producer_epoch: int,
    commit: bool, coordinator_epoch: int,
) -> ErrorCode:  # fmt: skip
    from broker.cluster.replica_manager import wait_replicated

    replicas = broker.cluster.replicas
    p = replicas.require_leader(topic, partition)
    offset = p.log.append_marker(
        producer_id, producer_epoch, commit, coordinator_epoch, leader_epoch=p.leader_epoch
    )
    p.maybe_advance_hw()
    broker.notifier.notify(topic, partition)  # wakes the followers' fetches
    timeout = broker.config.request_timeout_ms / 1000
    code: ErrorCode = await wait_replicated(p, offset + 1, timeout)
    return code
