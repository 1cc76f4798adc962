"""Kafka transactions (KIP-98): the transaction coordinator and ``__transaction_state``.

``local_coordinator``/``cluster_coordinator`` wire a ``TransactionCoordinator`` for a single
node or a cluster broker; ``broker.app`` calls one of them. The partition-side half (markers,
last stable offset, aborted-transaction index) lives in ``broker.log``; the request handlers
in ``broker.protocol.handlers.transactions``. See docs/transactions.md.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.transaction.coordinator import TransactionCoordinator
from broker.transaction.marker_append import append_marker
from broker.transaction.marker_writer import TxnMarkerWriter
from broker.transaction.state_log import LocalTxnLog
from broker.transaction.state_manager import TransactionStateManager

if TYPE_CHECKING:
    from broker.cluster.node import ClusterNode
    from broker.transaction.cluster import ClusterMarkerSender, ReplicatedTxnLog

__all__ = ["TransactionCoordinator", "cluster_coordinator", "local_coordinator"]


def local_coordinator(broker: Any) -> TransactionCoordinator:
    """Single node: the state topic in the local logs, every marker appended locally."""

    async def send(
        partitions: Collection[tuple[str, int]], pid: int, epoch: int, commit: bool, ce: int
    ) -> dict[tuple[str, int], ErrorCode]:
        return {
            tp: await append_marker(broker, tp[0], tp[1], pid, epoch, commit, ce)
            for tp in partitions
        }

    async def allocate() -> int:
        pid: int = broker.producer_ids.allocate()
        return pid

    backend = LocalTxnLog(broker.logs, broker.config)
    return TransactionCoordinator(
        broker.config,
        TransactionStateManager(backend),
        TxnMarkerWriter(send, lambda topic: topic in broker.logs.topics()),
        allocate,
        local=backend,
    )


def cluster_coordinator(
    broker: Any, node: ClusterNode
) -> tuple[TransactionCoordinator, ReplicatedTxnLog, ClusterMarkerSender]:
    """Cluster: a replicated state topic and markers to every partition leader."""
    from broker.transaction.cluster import ClusterMarkerSender, ReplicatedTxnLog

    backend = ReplicatedTxnLog(node)
    sender = ClusterMarkerSender(broker)
    coordinator = TransactionCoordinator(
        broker.config,
        TransactionStateManager(backend),
        TxnMarkerWriter(sender.send, sender.topic_exists),
        node.producer_ids.allocate_async,
    )
    backend.coordinator = coordinator
    return coordinator, backend, sender
