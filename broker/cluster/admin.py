"""Topic administration in cluster mode: what CreateTopics, CreatePartitions, DeleteTopics and
the config APIs write to ZooKeeper. Any broker may serve these requests (as in Kafka's ZooKeeper
era); the controller and every broker react to the znodes through their watches.

Replica placement is Kafka's rack-unaware rule: partition ``p``'s first replica is broker
``(p + start) % n`` of the sorted live brokers and the followers follow at a shift, with
``start`` and the shift drawn at random per topic so leadership spreads across brokers.
"""

from __future__ import annotations

import contextlib
import random
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from broker.cluster import znodes
from broker.cluster.znodes import TopicAssignment
from broker.errors import (
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)


def assign_replicas(
    brokers: list[int], partitions: int, replication_factor: int, first_partition: int = 0,
    start: int | None = None, shift: int | None = None,
) -> dict[int, tuple[int, ...]]:  # fmt: skip
    ids = sorted(brokers)
    n = len(ids)
    if replication_factor < 1 or replication_factor > n:
        raise InvalidReplicationFactorError(
            f"replication factor {replication_factor} is larger than the {n} live broker(s)"
            if replication_factor > n
            else f"replication factor must be at least 1, got {replication_factor}"
        )
    start = random.randrange(n) if start is None else start
    shift = random.randrange(n) if shift is None else shift
    out: dict[int, tuple[int, ...]] = {}
    for i in range(partitions):
        p = first_partition + i
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        replicas = [ids[first]]
        for j in range(replication_factor - 1):
            replicas.append(ids[(first + 1 + (shift + j) % (n - 1)) % n] if n > 1 else ids[first])
        out[p] = tuple(replicas)
    return out


def create_topic(
    zk: KazooClient,
    name: str,
    assignment: dict[int, tuple[int, ...]],
    configs: dict[str, str],
    topic_id: uuid.UUID | None = None,
) -> TopicAssignment:
    """Writes the topic's config then its assignment in one transaction (blocking)."""
    topic = TopicAssignment(topic_id or uuid.uuid4(), dict(assignment))
    zk.ensure_path(znodes.CONFIG_TOPICS)
    zk.ensure_path(znodes.TOPICS)
    tx = zk.transaction()
    tx.create(znodes.topic_config_path(name), znodes.encode_topic_config(configs))
    tx.create(znodes.topic_path(name), topic.encode())
    results = tx.commit()
    if any(isinstance(r, NodeExistsError) for r in results):
        raise TopicAlreadyExistsError(f"topic {name!r} already exists")
    for r in results:
        if isinstance(r, Exception) and not isinstance(r, NodeExistsError):
            raise r
    return topic


def request_delete(zk: KazooClient, name: str) -> None:
    """Queues a deletion for the controller (/admin/delete_topics/<name>)."""
    if not zk.exists(znodes.topic_path(name)):
        raise UnknownTopicOrPartitionError(f"unknown topic {name!r}")
    zk.ensure_path(znodes.DELETE_TOPICS)
    with contextlib.suppress(NodeExistsError):
        zk.create(f"{znodes.DELETE_TOPICS}/{name}", b"")


def add_partitions(zk: KazooClient, name: str, total: int, live: list[int]) -> TopicAssignment:
    """Grows a topic to ``total`` partitions with the replication factor it has (blocking)."""
    while True:
        try:
            raw, stat = zk.get(znodes.topic_path(name))
        except NoNodeError:
            raise UnknownTopicOrPartitionError(f"unknown topic {name!r}") from None
        topic = TopicAssignment.decode(raw)
        current = len(topic.partitions)
        if total <= current:
            raise InvalidPartitionsError(
                f"topic {name} has {current} partitions; the new count must be larger"
            )
        rf = len(topic.partitions[0]) if topic.partitions else 1
        extra = assign_replicas(live, total - current, rf, first_partition=current)
        grown = TopicAssignment(topic.topic_id, {**topic.partitions, **extra})
        try:
            zk.set(znodes.topic_path(name), grown.encode(), version=stat.version)
        except BadVersionError:
            continue
        return grown


def set_topic_config(zk: KazooClient, name: str, config: dict[str, str]) -> None:
    """Replaces the topic's override map cluster-wide (blocking)."""
    if not zk.exists(znodes.topic_path(name)):
        raise UnknownTopicOrPartitionError(f"unknown topic {name!r}")
    data = znodes.encode_topic_config(config)
    try:
        zk.set(znodes.topic_config_path(name), data)
    except NoNodeError:
        zk.create(znodes.topic_config_path(name), data, makepath=True)


def request_preferred_election(zk: KazooClient, partitions: list[tuple[str, int]]) -> None:
    """Asks the controller to move these partitions back to their first replica."""
    while True:
        try:
            raw, stat = zk.get(znodes.PREFERRED_ELECTION)
        except NoNodeError:
            try:
                zk.create(znodes.PREFERRED_ELECTION, znodes.encode_partitions(partitions))
                return
            except NodeExistsError:
                continue
        merged = sorted(set(znodes.decode_partitions(raw)) | set(partitions))
        try:
            zk.set(znodes.PREFERRED_ELECTION, znodes.encode_partitions(merged), stat.version)
            return
        except (BadVersionError, NoNodeError):
            continue


def reassign(
    zk: KazooClient, name: str, changes: dict[int, tuple[int, ...] | None]
) -> TopicAssignment:
    """Starts (or with None cancels) reassignments of partitions of one topic (blocking).

    During a reassignment the partition's replica list is target + old replicas not in the
    target, with ``adding``/``removing`` recording the difference (KIP-455); the controller
    finishes it once every target replica is in the ISR.
    """
    while True:
        try:
            raw, stat = zk.get(znodes.topic_path(name))
        except NoNodeError:
            raise UnknownTopicOrPartitionError(f"unknown topic {name!r}") from None
        topic = TopicAssignment.decode(raw)
        partitions = dict(topic.partitions)
        adding, removing = dict(topic.adding), dict(topic.removing)
        for p, target in changes.items():
            if p not in partitions:
                raise UnknownTopicOrPartitionError(f"unknown partition {name}-{p}")
            original = tuple(r for r in partitions[p] if r not in adding.get(p, ()))
            adding.pop(p, None)
            removing.pop(p, None)
            if target is None:
                partitions[p] = original
                continue
            partitions[p] = tuple(target) + tuple(r for r in original if r not in target)
            new = tuple(r for r in target if r not in original)
            gone = tuple(r for r in original if r not in target)
            if new:
                adding[p] = new
            if gone:
                removing[p] = gone
        updated = TopicAssignment(topic.topic_id, partitions, adding, removing)
        try:
            zk.set(znodes.topic_path(name), updated.encode(), version=stat.version)
        except BadVersionError:
            continue
        return updated
