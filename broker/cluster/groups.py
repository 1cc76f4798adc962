"""Consumer groups in a cluster: ``__consumer_offsets`` is a replicated topic, and each group's
coordinator is the leader of the group's offsets partition (Kafka's rule).

:class:`ClusterOffsets` is the coordinator's storage in cluster mode: appends go through the
replica manager as leader appends (acks=all: an OffsetCommit is answered only when the ISR has
it, so a coordinator failover keeps every acknowledged commit), and leadership changes of the
offsets partitions load or unload that partition's groups. FindCoordinator answers with the
partition's leader, creating the topic on first use (``offsets.topic.num.partitions``,
replication factor ``offsets.topic.replication.factor`` capped at the live broker count).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from kio.schema.errors import ErrorCode

from broker.coordinator.offsets_topic import TOPIC, TOPIC_CONFIGS, partition_for
from broker.errors import BrokerError, TopicAlreadyExistsError

if TYPE_CHECKING:
    from broker.cluster.node import ClusterNode

log = logging.getLogger(__name__)

GROUP_KEY = 0


class ClusterOffsets:
    def __init__(self, node: ClusterNode) -> None:
        self.node = node
        self.coordinator: Any = None  # broker.coordinator.GroupCoordinator
        self.loaded: set[int] = set()
        self._ends: dict[int, int] = {}

    def coordinates(self, partition: int) -> bool:
        return (
            partition in self.loaded
            and self.node.replicas.leader_partition(TOPIC, partition) is not None
        )

    def partition_count(self) -> int:
        topic = self.node.cache.topics.get(TOPIC)
        return len(topic.partitions) if topic is not None else 0

    def append(self, partition: int, batch: bytes) -> int:
        info, _ = self.node.replicas.append_as_leader(
            TOPIC, partition, batch, -1, int(time.time() * 1000)
        )
        self._ends[partition] = info.last_offset + 1
        self.node.notifier.notify(TOPIC, partition)
        return int(info.last_offset)

    async def wait(self, partition: int) -> ErrorCode:
        p = self.node.replicas.leader_partition(TOPIC, partition)
        if p is None:
            return ErrorCode.not_coordinator
        timeout = self.node.config.request_timeout_ms / 1000
        code = await self.node.replicas.wait_replicated(p, self._ends.get(partition, 0), timeout)
        if code == ErrorCode.not_leader_or_follower:
            return ErrorCode.not_coordinator
        return code

    def on_leadership(self, tp: tuple[str, int], leading: bool) -> None:
        topic, partition = tp
        if topic != TOPIC or self.coordinator is None:
            return
        if leading and partition not in self.loaded:
            self.coordinator.load_partition(partition)
            self.loaded.add(partition)
        elif not leading and partition in self.loaded:
            self.loaded.discard(partition)
            self.coordinator.unload_partition(partition)


async def find_coordinator(broker: Any, key: str, key_type: int) -> tuple[int, str, int, ErrorCode]:
    """(node id, host, port, error) of the coordinator for a group id."""
    unavailable = (-1, "", -1, ErrorCode.coordinator_not_available)
    if key_type != GROUP_KEY:
        return (-1, "", -1, ErrorCode.invalid_request if key_type != 1 else unavailable[3])
    node: ClusterNode = broker.cluster
    topic = node.cache.topics.get(TOPIC)
    if topic is None:
        await _create_offsets_topic(node)
        return unavailable
    leader = node.cache.leader_of(TOPIC, partition_for(key, len(topic.partitions)))
    info = node.cache.brokers.get(leader)
    if info is None:
        return unavailable
    return info.broker_id, info.host, info.port, ErrorCode.none


async def _create_offsets_topic(node: ClusterNode) -> None:
    cfg = node.config
    rf = max(1, min(cfg.offsets_topic_replication_factor, len(node.cache.brokers)))
    try:
        await node.create_topic(TOPIC, cfg.offsets_topic_num_partitions, rf, dict(TOPIC_CONFIGS))
        log.info("created %s", TOPIC, extra={"partitions": cfg.offsets_topic_num_partitions,
                                             "replication_factor": rf})  # fmt: skip
    except TopicAlreadyExistsError:
        pass
    except BrokerError as exc:
        log.warning("could not create %s: %s", TOPIC, exc)
