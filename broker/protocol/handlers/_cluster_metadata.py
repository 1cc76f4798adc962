"""Metadata (key 3) in cluster mode: every live broker, the controller, and for each partition
its leader, leader epoch, replicas, ISR and offline replicas, from the ZooKeeper-fed
``MetadataCache``. A partition without a live leader answers LEADER_NOT_AVAILABLE (clients
retry); an unknown topic is auto-created in ZooKeeper (``num.partitions``,
``default.replication.factor``) when allowed, and the answer waits briefly for its leaders.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import BrokerError, TopicAlreadyExistsError
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol.registry import RequestContext
from broker.security.acl import CLUSTER_NAME, AclOperation, ResourceType
from broker.security.authorizer import allowed

log = logging.getLogger(__name__)

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
_NULL_TOPIC_ID = uuid.UUID(int=0)
_AUTO_CREATE_WAIT_S = 5.0


def broker_entries(ctx: RequestContext, entry_cls: Any, id_field: str) -> tuple[Any, ...]:
    cache = ctx.broker.cluster.cache
    out = []
    for b in sorted(cache.brokers.values(), key=lambda b: b.broker_id):
        host, port = b.address_for(ctx.listener)  # the listener this client connected to
        out.append(build(entry_cls, **{id_field: b.broker_id}, host=host, port=port,
                         rack=b.rack, is_fenced=False))  # fmt: skip
    return tuple(out)


async def cluster_metadata(
    ctx: RequestContext, cls: Any, wanted: list[tuple[str | None, uuid.UUID | None]] | None,
    allow_create: bool,
) -> Any:  # fmt: skip
    node = ctx.broker.cluster
    cache = node.cache
    names: list[tuple[str | None, uuid.UUID | None]] = (
        [(n, None) for n in sorted(cache.topics)] if wanted is None else wanted
    )
    checking = ctx.broker.authorizer is not None
    entries = []
    for name, topic_id in names:
        if name is None and topic_id is not None:
            name = cache.topic_id_to_name(topic_id)
        if checking and name is not None and not _may(ctx, AclOperation.DESCRIBE, name):
            if wanted is None:
                continue  # a full listing leaves out what the principal may not DESCRIBE
            entries.append(_refused(cls, name, topic_id))
            continue
        if name is not None and name not in cache.topics and allow_create and topic_id is None:
            if checking and not (
                allowed(ctx, AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
                or _may(ctx, AclOperation.CREATE, name)
            ):
                entries.append(_refused(cls, name, topic_id))
                continue
            await _auto_create(ctx, name)
        entries.append(_topic(ctx, cls, name, topic_id))
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        brokers=broker_entries(ctx, nested(cls, "MetadataResponseBroker"), "node_id"),
        cluster_id=ctx.broker.cluster_id,
        controller_id=cache.controller_id,
        topics=tuple(entries),
        cluster_authorized_operations=-2147483648,
        error_code=ErrorCode.none,
    )


def _may(ctx: RequestContext, operation: AclOperation, topic: str) -> bool:
    return allowed(ctx, operation, ResourceType.TOPIC, topic)


def _refused(cls: Any, name: str, topic_id: uuid.UUID | None) -> Any:
    return build(nested(cls, "MetadataResponseTopic"),
                 error_code=ErrorCode.topic_authorization_failed, name=name,
                 topic_id=topic_id or _NULL_TOPIC_ID, partitions=())  # fmt: skip


async def _auto_create(ctx: RequestContext, name: str) -> None:
    node = ctx.broker.cluster
    cfg = ctx.broker.config
    try:
        await node.create_topic(name, cfg.num_partitions, cfg.default_replication_factor, {})
        log.info("auto-created topic", extra={"topic": name, "client": ctx.client_id})
    except TopicAlreadyExistsError:
        pass
    except BrokerError as exc:
        log.info("auto-create failed", extra={"topic": name, "error": str(exc)})
        return
    await node.wait_for_leaders(name, _AUTO_CREATE_WAIT_S)


def _topic(ctx: RequestContext, cls: Any, name: str | None, topic_id: uuid.UUID | None) -> Any:
    topic_cls = nested(cls, "MetadataResponseTopic")
    cache = ctx.broker.cluster.cache
    assignment = cache.topics.get(name) if name is not None else None
    if assignment is None:
        return build(
            topic_cls,
            error_code=ErrorCode.unknown_topic_or_partition
            if name is not None or topic_id is None
            else ErrorCode.unknown_topic_id,
            name=name,
            topic_id=topic_id or _NULL_TOPIC_ID,
            partitions=(),
        )
    part_cls = nested(cls, "MetadataResponsePartition")
    alive = cache.brokers
    partitions = []
    for p, replicas in sorted(assignment.partitions.items()):
        state = cache.states.get((name, p))
        leader = cache.leader_of(name, p) if name is not None else -1
        partitions.append(
            build(
                part_cls,
                error_code=ErrorCode.none if leader >= 0 else ErrorCode.leader_not_available,
                partition_index=p,
                leader_id=leader,
                leader_epoch=state.leader_epoch if state is not None else -1,
                replica_nodes=replicas,
                isr_nodes=state.isr if state is not None else (),
                offline_replicas=tuple(r for r in replicas if r not in alive),
            )
        )
    return build(
        topic_cls,
        error_code=ErrorCode.none,
        name=name,
        topic_id=assignment.topic_id,
        is_internal=name in INTERNAL_TOPICS,
        partitions=tuple(partitions),
        topic_authorized_operations=-2147483648,
    )
