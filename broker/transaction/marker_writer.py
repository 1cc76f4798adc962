"""TxnMarkerWriter: gets a transaction's markers into every one of its partitions.

After PrepareCommit/PrepareAbort is durable the coordinator answers the producer and hands the
transaction here (Kafka's ``TransactionMarkerChannelManager``). The writer sends the marker to
each partition's leader — itself on a single node, through ``send`` which in cluster mode
also speaks WriteTxnMarkers (key 27) to other brokers — and retries the partitions that fail
with a retriable error (leader moving, ISR catching up, connection lost) with a growing pause,
for as long as this broker still coordinates the transaction at the same coordinator epoch.
Only when every partition has its marker does the coordinator write CompleteCommit /
CompleteAbort. A partition of a topic deleted meanwhile is skipped (Kafka's rule); a partition
that refuses the marker as fenced (a newer producer epoch or coordinator already wrote there)
ends the attempt: a newer coordinator owns the transaction.

Crash safety comes from the order, not from this class: a crash anywhere leaves the
transaction in a Prepare state in ``__transaction_state``, and the coordinator that loads it
sends every marker again; a partition that already has the marker gets a second one, which
closes nothing and changes nothing for readers.

``SLUICE_TXN_CRASH_AFTER_MARKERS=N`` (tests only) makes the broker SIGKILL itself after the
N-th marker of a transaction is written, to test exactly that.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Collection

from kio.schema.errors import ErrorCode

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
SendMarkers = Callable[
    [Collection[TopicPartition], int, int, bool, int], Awaitable[dict[TopicPartition, ErrorCode]]
]
"""``send(partitions, producer_id, producer_epoch, commit, coordinator_epoch)`` -> an error
code per partition (NONE = the marker is durable there)."""

_FENCED = (ErrorCode.invalid_producer_epoch, ErrorCode.transaction_coordinator_fenced)
_FIRST_BACKOFF_S = 0.05
_MAX_BACKOFF_S = 1.0


def _crash_after() -> int | None:
    raw = os.environ.get("SLUICE_TXN_CRASH_AFTER_MARKERS")
    return int(raw) if raw and raw.isdigit() else None


class TxnMarkerWriter:
    def __init__(self, send: SendMarkers, topic_exists: Callable[[str], bool]) -> None:
        self._send = send
        self._topic_exists = topic_exists
        self._crash_after = _crash_after()

    async def write(
        self,
        transactional_id: str,
        partitions: Collection[TopicPartition],
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        still_valid: Callable[[], bool],
    ) -> bool:
        """True once every partition has the marker; False if the attempt was given up."""
        pending = set(partitions)
        backoff = _FIRST_BACKOFF_S
        written = 0
        while pending:
            if not still_valid():
                return False
            results = await self._send(
                sorted(pending), producer_id, producer_epoch, commit, coordinator_epoch
            )
            for tp, code in results.items():
                if code == ErrorCode.none:
                    pending.discard(tp)
                    written += 1
                    if self._crash_after is not None and written >= self._crash_after:
                        log.warning("SLUICE_TXN_CRASH_AFTER_MARKERS reached: killing the broker")
                        os.kill(os.getpid(), signal.SIGKILL)
                elif code == ErrorCode.unknown_topic_or_partition and not self._topic_exists(tp[0]):
                    log.info(
                        "transaction marker dropped: topic deleted",
                        extra={"transactional_id": transactional_id, "topic": tp[0]},
                    )
                    pending.discard(tp)
                elif code in _FENCED:
                    log.warning(
                        "transaction markers given up: fenced by a newer producer or "
                        "coordinator",
                        extra={"transactional_id": transactional_id,
                               "partition": f"{tp[0]}-{tp[1]}", "error": code.name},
                    )  # fmt: skip
                    return False
            if pending:
                log.debug(
                    "transaction markers pending; retrying",
                    extra={"transactional_id": transactional_id, "partitions": len(pending)},
                )
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF_S)
        return True
