"""CreateTopics (19), DeleteTopics (20), CreatePartitions (37), DeleteRecords (21).

Topic metadata lives in the ``LogManager``; these handlers translate requests into its calls and
its ``BrokerError``s into per-topic error codes and messages. Single-node rules: replication
factor must be 1 or -1 (broker default), and an explicit replica assignment may only name this
broker. ``validate_only`` runs every check, config parsing included, without creating anything.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import (
    BrokerError,
    InvalidPartitionsError,
    OffsetOutOfRangeError,
)
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol._topics import ZERO_UUID, resolve
from broker.protocol.handlers.configs import topic_config_entries
from broker.protocol.handlers.metadata import INTERNAL_TOPICS
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.acl import CLUSTER_NAME, AclOperation, ResourceType
from broker.security.authorizer import allowed

log = logging.getLogger(__name__)


class _Refused(BrokerError):
    """A request-level refusal carrying an arbitrary protocol error code."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = code


def _logs(ctx: RequestContext) -> Any:
    if ctx.broker.logs is None:
        raise _Refused(ErrorCode.kafka_storage_error, "storage unavailable")
    return ctx.broker.logs


@handles(19, 0, 7)
async def create_topics(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    result_cls = nested(cls, "CreatableTopicResult")
    config_cls = nested(cls, "CreatableTopicConfigs") if ctx.api_version >= 5 else None
    validate_only = getattr(request, "validate_only", False)  # v1+
    counts = Counter(t.name for t in request.topics)
    results = []
    for topic in request.topics:
        values: dict[str, Any] = dict(
            name=topic.name, topic_id=ZERO_UUID, error_code=ErrorCode.none, error_message=None,
            num_partitions=-1,
            replication_factor=-1, configs=(), topic_config_error_code=0,
        )  # fmt: skip
        try:
            if counts[topic.name] > 1:
                raise _Refused(ErrorCode.invalid_request, f"topic {topic.name} listed twice")
            if not (
                allowed(ctx, AclOperation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
                or allowed(ctx, AclOperation.CREATE, ResourceType.TOPIC, topic.name)
            ):
                raise _Refused(ErrorCode.topic_authorization_failed, "not authorized to create")
            if ctx.broker.cluster is not None:
                from broker.protocol.handlers._cluster_topics import create_in_cluster

                rf, partitions, info = await create_in_cluster(ctx, topic, request)
                values.update(topic_id=info, num_partitions=partitions, replication_factor=rf)
                if config_cls is not None:
                    configs = {c.name: c.value for c in topic.configs}
                    values["configs"] = _created_configs(ctx, config_cls, topic.name, configs)
                results.append(build(result_cls, **values))
                continue
            partitions = _partition_count(ctx, topic)
            configs = {c.name: c.value for c in topic.configs}
            info = _logs(ctx).create_topic(
                topic.name, partitions, configs, validate_only=validate_only
            )
            values.update(topic_id=info.topic_id, num_partitions=partitions, replication_factor=1)
            if config_cls is not None:
                values["configs"] = _created_configs(ctx, config_cls, topic.name, configs)
            if not validate_only:
                log.info("created topic", extra={"topic": topic.name, "partitions": partitions})
        except BrokerError as exc:
            values.update(error_code=exc.error_code, error_message=str(exc))
        results.append(build(result_cls, **values))
    return build(cls, throttle_time=NO_THROTTLE, topics=tuple(results))


def _partition_count(ctx: RequestContext, topic: Any) -> int:
    node = ctx.broker.config.node_id
    if topic.replication_factor not in (1, -1):
        raise _Refused(
            ErrorCode.invalid_replication_factor,
            f"replication factor {topic.replication_factor}: a single broker only supports 1",
        )
    if topic.assignments:
        if topic.num_partitions != -1 or topic.replication_factor != -1:
            raise _Refused(
                ErrorCode.invalid_request,
                "an explicit assignment needs num_partitions and replication_factor of -1",
            )
        for a in topic.assignments:
            if tuple(a.broker_ids) != (node,):
                raise _Refused(
                    ErrorCode.invalid_replica_assignment,
                    f"partition {a.partition_index} must be assigned to broker {node} only",
                )
        return _check_count(ctx, len(topic.assignments))
    if topic.num_partitions == -1:
        return ctx.broker.config.num_partitions
    return _check_count(ctx, int(topic.num_partitions))


def _check_count(ctx: RequestContext, count: int) -> int:
    """Rejects counts below 1 or above ``max_partitions_per_topic``.

    The upper bound is not Kafka's, but one request must not be able to make the broker create
    millions of directories (a typo, or a corrupt request, would otherwise stall it for hours).
    """
    limit = ctx.broker.config.max_partitions_per_topic
    if not 1 <= count <= limit:
        raise InvalidPartitionsError(f"number of partitions must be between 1 and {limit}: {count}")
    return count


def _created_configs(
    ctx: RequestContext, config_cls: Any, name: str, overrides: dict[str, str]
) -> tuple[Any, ...]:
    """CreateTopics v5+ echoes the new topic's effective configs (validate_only included)."""
    entries = topic_config_entries(ctx.broker, name, overrides=overrides)
    return tuple(
        build(
            config_cls,
            name=e.name,
            value=e.value,
            read_only=False,
            config_source=e.source,
            is_sensitive=False,
        )
        for e in entries
    )


@handles(20, 0, 6)
async def delete_topics(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    result_cls = nested(cls, "DeletableTopicResult")
    if hasattr(request, "topics"):
        wanted = [resolve(ctx, t) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    results = []
    for name, topic_id in wanted:
        try:
            if name is None:
                raise _Refused(ErrorCode.unknown_topic_id, f"unknown topic id {topic_id}")
            if not allowed(ctx, AclOperation.DELETE, ResourceType.TOPIC, name):
                raise _Refused(ErrorCode.topic_authorization_failed, "not authorized to delete")
            if name in INTERNAL_TOPICS:
                raise _Refused(ErrorCode.invalid_request, f"{name} is an internal topic")
            logs = _logs(ctx)
            if topic_id is None:
                topic_id = logs.topic(name).topic_id
            if ctx.broker.cluster is not None:
                from broker.protocol.handlers._cluster_topics import delete_in_cluster

                await delete_in_cluster(ctx, name, request)
            else:
                logs.delete_topic(name)
            log.info("deleted topic", extra={"topic": name})
            code, message = ErrorCode.none, None
        except BrokerError as exc:
            code, message = exc.error_code, str(exc)
        results.append(
            build(result_cls, name=name, topic_id=topic_id, error_code=code, error_message=message)
        )
    ctx.broker.notifier.notify_all()  # parked fetches on deleted partitions answer now
    return build(cls, throttle_time=NO_THROTTLE, responses=tuple(results))


@handles(37, 0, 3)
async def create_partitions(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    result_cls = nested(cls, "CreatePartitionsTopicResult")
    results = []
    for topic in request.topics:
        try:
            if not allowed(ctx, AclOperation.ALTER, ResourceType.TOPIC, topic.name):
                raise _Refused(ErrorCode.topic_authorization_failed, "not authorized to alter")
            logs = _logs(ctx)
            current = logs.topic(topic.name).partitions
            _check_count(ctx, topic.count)
            if topic.count <= current:
                raise InvalidPartitionsError(
                    f"topic {topic.name} has {current} partitions; the new count must be larger"
                )
            if not request.validate_only and ctx.broker.cluster is not None:
                from broker.protocol.handlers._cluster_topics import grow_in_cluster

                await grow_in_cluster(ctx, topic.name, topic.count)
            elif not request.validate_only:
                logs.create_partitions(topic.name, topic.count)
                log.info("added partitions", extra={"topic": topic.name, "total": topic.count})
            code, message = ErrorCode.none, None
        except BrokerError as exc:
            code, message = exc.error_code, str(exc)
        results.append(build(result_cls, name=topic.name, error_code=code, error_message=message))
    return build(cls, throttle_time=NO_THROTTLE, results=tuple(results))


@handles(21, 0, 2)
async def delete_records(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    part_cls = nested(cls, "DeleteRecordsPartitionResult")
    topic_cls = nested(cls, "DeleteRecordsTopicResult")
    topics = []
    for topic in request.topics:
        parts = []
        permitted = allowed(ctx, AclOperation.DELETE, ResourceType.TOPIC, topic.name)
        for p in topic.partitions:
            try:
                if not permitted:  # per topic, as Kafka answers
                    raise _Refused(ErrorCode.topic_authorization_failed, "not authorized")
                plog = _logs(ctx).log(topic.name, p.partition_index)
                hw = plog.high_watermark
                target = hw if p.offset == -1 else p.offset
                if target > hw or target < 0:
                    raise OffsetOutOfRangeError(f"offset {p.offset} is beyond {hw}")
                low = plog.delete_records_before(target)
                code = ErrorCode.none
            except BrokerError as exc:
                low, code = -1, exc.error_code
            parts.append(
                build(
                    part_cls, partition_index=p.partition_index, low_watermark=low, error_code=code
                )
            )
        topics.append(build(topic_cls, name=topic.name, partitions=tuple(parts)))
    return build(cls, throttle_time=NO_THROTTLE, topics=tuple(topics))
