"""Blocking ZooKeeper reads and writes of the controller (run in the ZooKeeper executor).

``read_view`` is what one reconcile pass decides on; ``bump_epoch`` is the election's
conditional increment of ``/controller_epoch``; ``delete_topic_znodes`` carries out a
deletion request. Kept apart from ``controller.py``, which holds the decisions.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, NotEmptyError

from broker.cluster import znodes
from broker.cluster.znodes import (
    PartitionState,
    TopicAssignment,
    decode_partitions,
    partition_state_path,
)

TopicPartition = tuple[str, int]


@dataclass
class ClusterView:
    """One consistent-enough read of what the controller decides on."""

    alive: set[int]
    shutting_down: set[int]
    topics: dict[str, TopicAssignment]
    states: dict[TopicPartition, PartitionState]
    deletions: list[str]
    preferred: set[TopicPartition]
    topic_versions: dict[str, int]


def read_view(zk: KazooClient) -> ClusterView:
    """Reads the cluster from ZooKeeper (blocking: run in the ZooKeeper executor)."""
    alive = {int(b) for b in zk.get_children(znodes.BROKER_IDS)}
    shutting = {int(b) for b in zk.get_children(znodes.CONTROLLED_SHUTDOWN)}
    deletions = list(zk.get_children(znodes.DELETE_TOPICS))
    topics: dict[str, TopicAssignment] = {}
    versions: dict[str, int] = {}
    states: dict[TopicPartition, PartitionState] = {}
    for topic in zk.get_children(znodes.TOPICS):
        try:
            raw, stat = zk.get(znodes.topic_path(topic))
        except NoNodeError:
            continue
        assignment = TopicAssignment.decode(raw)
        topics[topic] = assignment
        versions[topic] = stat.version
        for p in assignment.partitions:
            try:
                data, stat = zk.get(partition_state_path(topic, p))
            except NoNodeError:
                continue
            states[(topic, p)] = PartitionState.decode(data, stat.version)
    try:
        raw, _ = zk.get(znodes.PREFERRED_ELECTION)
        preferred = set(decode_partitions(raw))
    except NoNodeError:
        preferred = set()
    return ClusterView(alive, shutting, topics, states, deletions, preferred, versions)


def bump_epoch(zk: KazooClient) -> tuple[int, int]:
    """Increments /controller_epoch with a conditional write; returns (epoch, znode version)."""
    while True:
        try:
            raw, stat = zk.get(znodes.CONTROLLER_EPOCH)
        except NoNodeError:
            try:
                zk.create(znodes.CONTROLLER_EPOCH, b"1")
            except NodeExistsError:
                continue
            _, stat = zk.get(znodes.CONTROLLER_EPOCH)
            return 1, stat.version
        epoch = int(raw or b"0") + 1
        try:
            new = zk.set(znodes.CONTROLLER_EPOCH, str(epoch).encode(), version=stat.version)
        except BadVersionError:
            continue
        return epoch, new.version


def delete_topic_znodes(zk: KazooClient, topic: str) -> None:
    """Removes a topic's znodes; brokers see it vanish and delete their local logs."""
    for path in (znodes.topic_path(topic), znodes.topic_config_path(topic)):
        for _ in range(5):
            try:
                zk.delete(path, recursive=True)
                break
            except NoNodeError:
                break
            except NotEmptyError:
                continue
    with contextlib.suppress(NoNodeError):
        zk.delete(f"{znodes.DELETE_TOPICS}/{topic}")
