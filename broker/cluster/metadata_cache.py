"""What this broker knows about the cluster, as ZooKeeper last told it.

Filled by ZooKeeper watches (``node.py``) on the event loop: live brokers (/brokers/ids),
the controller (/controller), every topic's id and replica assignment (/brokers/topics/<t>) and
every partition's leader/epoch/ISR (``.../state``). Request handlers read it synchronously
(Metadata, FindCoordinator, DescribeCluster, leadership checks) and never wait on ZooKeeper.

It may lag ZooKeeper by a watch round trip; that is Kafka's UpdateMetadata behaviour too, and
clients cope: a stale leader answers NOT_LEADER_OR_FOLLOWER and the client refreshes.
Single-threaded: the loop is the only reader and writer.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from broker.cluster.znodes import NO_LEADER, BrokerInfo, PartitionState, TopicAssignment

TopicPartition = tuple[str, int]


@dataclass
class MetadataCache:
    brokers: dict[int, BrokerInfo] = field(default_factory=dict)
    controller_id: int = -1
    topics: dict[str, TopicAssignment] = field(default_factory=dict)
    states: dict[TopicPartition, PartitionState] = field(default_factory=dict)
    topic_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    shutting_down: set[int] = field(default_factory=set)

    def replicas(self, topic: str, partition: int) -> tuple[int, ...]:
        assignment = self.topics.get(topic)
        if assignment is None:
            return ()
        return assignment.partitions.get(partition, ())

    def leader_of(self, topic: str, partition: int) -> int:
        """The partition's leader if it is alive, else NO_LEADER (-1)."""
        state = self.states.get((topic, partition))
        if state is None or state.leader not in self.brokers:
            return NO_LEADER
        return state.leader

    def topic_id_to_name(self, topic_id: uuid.UUID) -> str | None:
        for name, assignment in self.topics.items():
            if assignment.topic_id == topic_id:
                return name
        return None

    def partitions_led_by(self, broker_id: int) -> list[TopicPartition]:
        return [tp for tp, s in self.states.items() if s.leader == broker_id]
