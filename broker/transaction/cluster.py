"""Transactions in a cluster: a replicated ``__transaction_state`` and markers between brokers.

- ``ReplicatedTxnLog``: the coordinator's state appends go through the replica manager as
  leader appends and are answered only once on the ISR (acks=all), so a coordinator failover
  keeps every state a client was told about. A transactional id's coordinator is the leader
  of its ``__transaction_state`` partition; when this broker starts leading one it loads it
  (``TransactionCoordinator.on_election`` with the partition's leader epoch as the
  coordinator epoch) and when it stops it unloads it (``on_leadership``), like the group
  coordinator with ``__consumer_offsets``.
- ``ClusterMarkerSender``: markers for partitions this broker leads are appended here; the
  others go to their leaders in one WriteTxnMarkers request (key 27, v1) per broker, over one
  connection per broker (``PeerConnection``), requests on it one at a time.
- ``find_coordinator``: FindCoordinator with key type 1 answers the leader of the id's
  partition, creating the topic on first use (``transaction.state.log.num.partitions``,
  replication factor ``transaction.state.log.replication.factor`` capped at the live
  brokers, ``min.insync.replicas`` = ``transaction.state.log.min.isr`` capped at it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode
from kio.schema.write_txn_markers.v1 import request as wtm_req

from broker.cluster.peer_client import PeerConnection
from broker.errors import BrokerError, TopicAlreadyExistsError
from broker.protocol._entities import build
from broker.transaction.marker_append import append_marker
from broker.transaction.state_log import TOPIC, coordinator_error, replay_log, topic_configs

if TYPE_CHECKING:
    from broker.cluster.node import ClusterNode
    from broker.transaction.coordinator import TransactionCoordinator

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
WRITE_TXN_MARKERS_VERSION = 1


class ReplicatedTxnLog:
    def __init__(self, node: ClusterNode) -> None:
        self.node = node
        self.coordinator: TransactionCoordinator | None = None

    def partition_count(self) -> int:
        topic = self.node.cache.topics.get(TOPIC)
        return len(topic.partitions) if topic is not None else 0

    async def append(self, partition: int, batch: bytes) -> ErrorCode:
        from broker.cluster.replica_manager import wait_replicated

        replicas = self.node.replicas
        try:
            info, p = replicas.append_as_leader(TOPIC, partition, batch, -1,
                                                int(time.time() * 1000))  # fmt: skip
        except BrokerError as exc:
            return coordinator_error(exc.error_code)
        self.node.notifier.notify(TOPIC, partition)
        timeout = self.node.config.request_timeout_ms / 1000
        code: ErrorCode = await wait_replicated(p, info.last_offset + 1, timeout)
        return ErrorCode.none if code == ErrorCode.none else coordinator_error(code)

    def replay(self, partition: int) -> Iterator[tuple[bytes, bytes | None]]:
        return replay_log(self.node.logs, partition)

    def on_leadership(self, tp: TopicPartition, leading: bool) -> None:
        topic, partition = tp
        if topic != TOPIC or self.coordinator is None:
            return
        if leading:
            p = self.node.replicas.leader_partition(TOPIC, partition)
            epoch = p.leader_epoch if p is not None else 0
            self.coordinator.on_election(partition, epoch)
        else:
            self.coordinator.on_resignation(partition)


class ClusterMarkerSender:
    """``send`` for the marker writer: local appends and WriteTxnMarkers to other leaders."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self._conns: dict[int, PeerConnection] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    @property
    def node(self) -> ClusterNode:
        node: ClusterNode = self.broker.cluster
        return node

    def topic_exists(self, topic: str) -> bool:
        return topic in self.node.cache.topics

    async def send(
        self, partitions: Collection[TopicPartition], producer_id: int, producer_epoch: int,
        commit: bool, coordinator_epoch: int,
    ) -> dict[TopicPartition, ErrorCode]:  # fmt: skip
        by_leader: dict[int, list[TopicPartition]] = {}
        results: dict[TopicPartition, ErrorCode] = {}
        for tp in partitions:
            leader = self.node.cache.leader_of(*tp)
            if leader < 0:
                results[tp] = ErrorCode.not_leader_or_follower
            else:
                by_leader.setdefault(leader, []).append(tp)
        me = self.node.broker_id
        jobs = [
            self._local(tps, producer_id, producer_epoch, commit, coordinator_epoch)
            if leader == me
            else self._remote(leader, tps, producer_id, producer_epoch, commit, coordinator_epoch)
            for leader, tps in by_leader.items()
        ]
        for part in await asyncio.gather(*jobs):
            results.update(part)
        return results

    async def _local(
        self, tps: list[TopicPartition], pid: int, epoch: int, commit: bool, coord_epoch: int
    ) -> dict[TopicPartition, ErrorCode]:
        codes = await asyncio.gather(
            *(append_marker(self.broker, t, p, pid, epoch, commit, coord_epoch) for t, p in tps)
        )
        return dict(zip(tps, codes, strict=True))

    async def _remote(
        self, leader: int, tps: list[TopicPartition], pid: int, epoch: int, commit: bool,
        coord_epoch: int,
    ) -> dict[TopicPartition, ErrorCode]:  # fmt: skip
        by_topic: dict[str, list[int]] = {}
        for topic, partition in tps:
            by_topic.setdefault(topic, []).append(partition)
        request = build(
            wtm_req.WriteTxnMarkersRequest,
            markers=(
                build(
                    wtm_req.WritableTxnMarker, producer_id=pid, producer_epoch=epoch,
                    transaction_result=commit, coordinator_epoch=coord_epoch,
                    topics=tuple(
                        build(wtm_req.WritableTxnMarkerTopic, name=t, partition_indexes=tuple(ps))
                        for t, ps in by_topic.items()
                    ),
                ),
            ),
        )  # fmt: skip
        lock = self._locks.setdefault(leader, asyncio.Lock())
        timeout = self.node.config.request_timeout_ms / 1000 + 5
        async with lock:
            try:
                conn = await self._connection(leader)
                response = await conn.request(27, WRITE_TXN_MARKERS_VERSION, request, timeout)
            except (OSError, ConnectionError, TimeoutError, asyncio.IncompleteReadError) as exc:
                log.info("WriteTxnMarkers to broker %d failed: %r; will retry", leader, exc)
                self._drop(leader)
                return dict.fromkeys(tps, ErrorCode.network_exception)
        results: dict[TopicPartition, ErrorCode] = {}
        for marker in response.markers:
            for topic in marker.topics:
                for part in topic.partitions:
                    results[(topic.name, part.partition_index)] = part.error_code
        return {tp: results.get(tp, ErrorCode.unknown_server_error) for tp in tps}

    async def _connection(self, broker_id: int) -> PeerConnection:
        conn = self._conns.get(broker_id)
        if conn is None:
            info = self.node.cache.brokers.get(broker_id)
            if info is None:
                raise ConnectionError(f"broker {broker_id} is not registered")
            conn = PeerConnection(
                info.host,
                info.port,
                f"broker-{self.node.broker_id}-txn-markers",
                self.node.peer_security,
            )
            await conn.connect(self.node.config.request_timeout_ms / 1000)
            self._conns[broker_id] = conn
        return conn

    def _drop(self, broker_id: int) -> None:
        conn = self._conns.pop(broker_id, None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        for broker_id in list(self._conns):
            self._drop(broker_id)


async def find_coordinator(broker: Any, key: str) -> tuple[int, str, int, ErrorCode]:
    """(node id, host, port, error) of the coordinator for a transactional id."""
    unavailable = (-1, "", -1, ErrorCode.coordinator_not_available)
    node: ClusterNode = broker.cluster
    topic = node.cache.topics.get(TOPIC)
    if topic is None:
        await _create_topic(node)
        return unavailable
    from broker.coordinator.offsets_topic import partition_for

    leader = node.cache.leader_of(TOPIC, partition_for(key, len(topic.partitions)))
    info = node.cache.brokers.get(leader)
    if info is None:
        return unavailable
    return info.broker_id, info.host, info.port, ErrorCode.none


async def _create_topic(node: ClusterNode) -> None:
    cfg = node.config
    rf = max(1, min(cfg.transaction_state_log_replication_factor, len(node.cache.brokers)))
    try:
        await node.create_topic(TOPIC, cfg.transaction_state_log_num_partitions, rf,
                                topic_configs(cfg, rf))  # fmt: skip
        log.info("created %s", TOPIC, extra={"partitions": cfg.transaction_state_log_num_partitions,
                                             "replication_factor": rf})  # fmt: skip
    except TopicAlreadyExistsError:
        pass
    except BrokerError as exc:
        log.warning("could not create %s: %s", TOPIC, exc)
