"""Metadata (key 3): the single broker, the topics, and topic auto-creation.

Every partition is led by this broker with itself as the only replica and in-sync replica, at
leader epoch 0 (there is no leader election on a single node). Asking for an unknown topic
creates it when ``auto_create_topics`` is on and the request allows it (v4+ carries
``allow_auto_topic_creation``; older versions always allow), which is how Kafka behaves and what
producers that never call CreateTopics rely on.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import (
    BrokerError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from broker.protocol._entities import NO_THROTTLE, build, has_field, nested
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.acl import CLUSTER_NAME, AclOperation, ResourceType
from broker.security.authorizer import allowed

log = logging.getLogger(__name__)

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
_NULL_TOPIC_ID = uuid.UUID(int=0)


@handles(3, 0, 13)
async def metadata(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    broker = ctx.broker
    if broker.cluster is not None:
        from broker.protocol.handlers._cluster_metadata import cluster_metadata

        wanted = request.topics
        all_topics = wanted is None or (ctx.api_version == 0 and not wanted)
        allow = broker.config.auto_create_topics and getattr(
            request, "allow_auto_topic_creation", True
        )
        topics = None if all_topics else _requested(ctx, request)
        return await cluster_metadata(ctx, cls, topics, allow)
    host, port = broker.advertised(ctx.listener)  # the listener this client connected to
    node = broker.config.node_id
    topics = _requested(ctx, request)
    allow_create = broker.config.auto_create_topics and getattr(
        request, "allow_auto_topic_creation", True
    )
    if broker.authorizer is not None and (request.topics is None or not request.topics):
        # Listing every topic lists those the principal may DESCRIBE (Kafka filters silently).
        topics = [t for t in topics if t[0] is None or _may(ctx, AclOperation.DESCRIBE, t[0])]
    entries = []
    for name, topic_id in topics:
        entries.append(_describe(ctx, cls, name, topic_id, allow_create))
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        brokers=(
            build(
                nested(cls, "MetadataResponseBroker"),
                node_id=node,
                host=host,
                port=port,
                rack=broker.config.rack,
            ),
        ),
        cluster_id=broker.cluster_id,
        controller_id=node,
        topics=tuple(entries),
        cluster_authorized_operations=-2147483648,
        error_code=ErrorCode.none,
    )


def _may(ctx: RequestContext, operation: AclOperation, topic: str) -> bool:
    return allowed(ctx, operation, ResourceType.TOPIC, topic)


def _requested(ctx: RequestContext, request: Any) -> list[tuple[str | None, uuid.UUID | None]]:
    """(name, id) pairs to describe; all topics for null (v1+) or empty (v0) lists."""
    wanted = request.topics
    if wanted is None or (ctx.api_version == 0 and not wanted):
        logs = ctx.broker.logs
        return [(name, None) for name in sorted(logs.topics())] if logs is not None else []
    by_id = has_field(type(wanted[0]), "topic_id") if wanted else False
    out: list[tuple[str | None, uuid.UUID | None]] = []
    for t in wanted:
        topic_id = t.topic_id if by_id and t.topic_id not in (None, _NULL_TOPIC_ID) else None
        out.append((t.name, topic_id))
    return out


def _describe(
    ctx: RequestContext, cls: Any, name: str | None, topic_id: uuid.UUID | None, create: bool
) -> Any:
    topic_cls = nested(cls, "MetadataResponseTopic")
    logs = ctx.broker.logs
    try:
        if logs is None:
            raise UnknownTopicOrPartitionError("storage unavailable")
        if name is None and topic_id is not None:
            name = ctx.broker.topic_name(topic_id)
        if name is None:
            raise UnknownTopicOrPartitionError(f"unknown topic id {topic_id}")
        if not _may(ctx, AclOperation.DESCRIBE, name):
            raise TopicAuthorizationFailedError(name)
        try:
            info = logs.topic(name)
        except UnknownTopicOrPartitionError:
            if not create or topic_id is not None:
                raise
            if not (
                allowed(ctx, AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
                or _may(ctx, AclOperation.CREATE, name)
            ):
                raise TopicAuthorizationFailedError(name) from None
            info = logs.create_topic(name, ctx.broker.config.num_partitions)
            log.info(
                "auto-created topic",
                extra={"topic": name, "partitions": info.partitions, "client": ctx.client_id},
            )
    except BrokerError as exc:
        return build(
            topic_cls,
            error_code=exc.error_code,
            name=name,
            topic_id=topic_id or _NULL_TOPIC_ID,
            partitions=(),
        )
    node = ctx.broker.config.node_id
    part_cls = nested(cls, "MetadataResponsePartition")
    partitions = tuple(
        build(
            part_cls,
            error_code=ErrorCode.none,
            partition_index=p,
            leader_id=node,
            leader_epoch=0,
            replica_nodes=(node,),
            isr_nodes=(node,),
            offline_replicas=(),
        )
        for p in range(info.partitions)
    )
    return build(
        topic_cls,
        error_code=ErrorCode.none,
        name=info.name,
        topic_id=info.topic_id,
        is_internal=info.name in INTERNAL_TOPICS,
        partitions=partitions,
        topic_authorized_operations=-2147483648,
    )
