"""CreateTopics / DeleteTopics / CreatePartitions in cluster mode: written to ZooKeeper.

Any broker serves them, as in Kafka's ZooKeeper era: it validates, writes the znodes
(``broker.cluster.admin``) and waits — bounded by the request's timeout — until its own cache
shows the result (leaders elected, topic gone), so a client that asks for metadata right after
sees it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from broker.cluster import admin
from broker.errors import BrokerError, InvalidReplicationFactorError
from broker.log.config import LogConfig
from broker.protocol.registry import RequestContext

_MAX_WAIT_S = 10.0


class _Refused(BrokerError):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = code


def _timeout_s(request: Any) -> float:
    timeout = getattr(request, "timeout", None)
    seconds = timeout.total_seconds() if timeout is not None else _MAX_WAIT_S
    return min(max(seconds, 0.0), _MAX_WAIT_S)


async def create_in_cluster(
    ctx: RequestContext, topic: Any, request: Any
) -> tuple[int, int, uuid.UUID]:
    """Returns (replication factor, partitions, topic id); raises BrokerError."""
    node = ctx.broker.cluster
    cfg = ctx.broker.config
    live = sorted(node.cache.brokers)
    configs = {c.name: c.value for c in topic.configs}
    LogConfig.from_topic_configs(configs, ctx.broker.config.log_config())  # raises if invalid
    assignment: dict[int, tuple[int, ...]] | None = None
    if topic.assignments:
        if topic.num_partitions != -1 or topic.replication_factor != -1:
            raise _Refused(
                ErrorCode.invalid_request,
                "an explicit assignment needs num_partitions and replication_factor of -1",
            )
        assignment = {}
        for a in topic.assignments:
            replicas = tuple(a.broker_ids)
            if not replicas or len(set(replicas)) != len(replicas):
                raise _Refused(
                    ErrorCode.invalid_replica_assignment,
                    f"partition {a.partition_index}: replicas must be distinct and non-empty",
                )
            unknown = [b for b in replicas if b not in live]
            if unknown:
                raise _Refused(
                    ErrorCode.invalid_replica_assignment,
                    f"partition {a.partition_index}: brokers {unknown} are not alive",
                )
            assignment[a.partition_index] = replicas
        if sorted(assignment) != list(range(len(assignment))):
            raise _Refused(
                ErrorCode.invalid_replica_assignment, "partitions must be numbered 0..n-1"
            )
        if len({len(r) for r in assignment.values()}) != 1:
            raise _Refused(
                ErrorCode.invalid_replica_assignment, "every partition needs the same RF"
            )
        partitions, rf = len(assignment), len(assignment[0])
    else:
        partitions = cfg.num_partitions if topic.num_partitions == -1 else topic.num_partitions
        rf = cfg.default_replication_factor if topic.replication_factor == -1 else (
            topic.replication_factor)  # fmt: skip
        limit = cfg.max_partitions_per_topic
        if not 1 <= partitions <= limit:
            raise _Refused(
                ErrorCode.invalid_partitions,
                f"number of partitions must be between 1 and {limit}: {partitions}",
            )
        if rf < 1 or rf > len(live):
            raise InvalidReplicationFactorError(
                f"replication factor {rf} must be between 1 and the {len(live)} live brokers"
            )
        assignment = admin.assign_replicas(live, partitions, rf)
    if node.cache.topics.get(topic.name) is not None:
        from broker.errors import TopicAlreadyExistsError

        raise TopicAlreadyExistsError(f"topic {topic.name!r} already exists")
    if request.validate_only:
        return rf, partitions, uuid.UUID(int=0)
    created = await node.create_topic(topic.name, partitions, rf, configs, assignment)
    await node.wait_for_leaders(topic.name, _timeout_s(request))
    return rf, partitions, created.topic_id


async def delete_in_cluster(ctx: RequestContext, name: str, request: Any) -> None:
    node = ctx.broker.cluster
    await node.zk.run(admin.request_delete, name)
    deadline = time.monotonic() + _timeout_s(request)
    while name in node.cache.topics and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


async def grow_in_cluster(ctx: RequestContext, name: str, total: int) -> None:
    node = ctx.broker.cluster
    await node.zk.run(admin.add_partitions, name, total, sorted(node.cache.brokers))
    deadline = time.monotonic() + _MAX_WAIT_S
    while time.monotonic() < deadline:
        topic = node.cache.topics.get(name)
        if topic is not None and len(topic.partitions) >= total:
            break
        await asyncio.sleep(0.02)
    await node.wait_for_leaders(name, max(deadline - time.monotonic(), 0.0))
