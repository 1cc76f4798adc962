"""Group offset APIs: OffsetCommit (8), OffsetFetch (9) and OffsetDelete (47).

Translate kio requests to ``GroupCoordinator`` calls and back, for every version Kafka 3.x or
kio knows: OffsetFetch v8 batches groups and OffsetCommit/OffsetFetch v10 name topics by id.
OffsetCommit v0 (which Kafka stored in ZooKeeper) carries no generation or member and commits
like an admin tool; v1 may carry its own commit timestamp. OffsetFetch v0 reads the same store
as v1+: there is no separate ZooKeeper offset store here. OffsetFetch v7+ with
``require_stable`` answers UNSTABLE_OFFSET_COMMIT for partitions whose offsets a transaction
has committed but not yet completed (KIP-447). The membership APIs are in ``groups.py``.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from kio.schema.errors import ErrorCode

from broker.coordinator.records import OffsetValue
from broker.protocol._entities import NO_THROTTLE, build, has_field, item_class
from broker.protocol.handlers._group_common import (
    NOT_AVAILABLE,
    active_coordinator,
)
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.acl import AclOperation, ResourceType
from broker.security.authorizer import allowed


@handles(8, 0, 10)
async def offset_commit(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = active_coordinator(ctx)
    by_id = ctx.api_version >= 10
    now = int(time.time() * 1000)
    offsets: dict[tuple[str, int], OffsetValue] = {}
    unknown: list[tuple[Any, int]] = []
    names: dict[Any, str] = {}
    for topic in request.topics:
        name = ctx.broker.topic_name(topic.topic_id) if by_id else topic.name
        for p in topic.partitions:
            if name is None:
                unknown.append((topic.topic_id, p.partition_index))
                continue
            names[topic.topic_id if by_id else name] = name
            stamped = getattr(p, "commit_timestamp", -1)  # v1 only; -1 = "now"
            offsets[(name, p.partition_index)] = OffsetValue(
                p.committed_offset,
                getattr(p, "committed_leader_epoch", -1),
                p.committed_metadata or "",
                now if stamped == -1 else stamped,
            )
    # READ on the group is checked before the handler; a topic without READ gets its error
    # per partition and the others are committed, as Kafka answers
    readable = {n for n in names.values() if allowed(ctx, AclOperation.READ, ResourceType.TOPIC, n)}
    refused = {tp: ErrorCode.topic_authorization_failed for tp in offsets if tp[0] not in readable}
    offsets = {tp: v for tp, v in offsets.items() if tp not in refused}
    if coordinator is None:
        errors = dict.fromkeys(offsets, NOT_AVAILABLE)
    elif not offsets:
        errors = {}
    else:
        errors = coordinator.commit_offsets(
            request.group_id,
            getattr(request, "generation_id_or_member_epoch", -1),  # absent in v0
            getattr(request, "member_id", ""),
            getattr(request, "group_instance_id", None),
            offsets,
        )
        if any(e is ErrorCode.none for e in errors.values()):
            # Cluster mode: answer once the commit is on the ISR (a no-op on a single node).
            durable = await coordinator.wait_durable(request.group_id)
            if durable is not ErrorCode.none:
                errors = {tp: durable if e is ErrorCode.none else e for tp, e in errors.items()}
    errors = {**errors, **refused}
    topic_cls = item_class(cls, "topics")
    part_cls = item_class(topic_cls, "partitions")
    out: dict[Any, list[Any]] = {}
    for ref, name in names.items():
        out[ref] = [
            build(part_cls, partition_index=p, error_code=err)
            for (t, p), err in errors.items()
            if t == name
        ]
    for ref, p in unknown:
        out.setdefault(ref, []).append(
            build(part_cls, partition_index=p, error_code=ErrorCode.unknown_topic_id)
        )
    key = "topic_id" if by_id else "name"
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        topics=tuple(
            build(topic_cls, **{key: ref}, partitions=tuple(ps)) for ref, ps in out.items()
        ),
    )


@handles(9, 0, 10)
async def offset_fetch(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    stable = getattr(request, "require_stable", False)
    if not has_field(cls, "groups"):
        error, topics = _fetch_group(ctx, cls, request.group_id, request.topics, stable)
        if error is not ErrorCode.none and not has_field(cls, "error_code"):
            topics = ()
        return build(cls, throttle_time=NO_THROTTLE, topics=topics, error_code=error)
    group_cls = item_class(cls, "groups")
    groups = []
    for g in request.groups:
        error, topics = _fetch_group(ctx, group_cls, g.group_id, g.topics, stable)
        groups.append(build(group_cls, group_id=g.group_id, topics=topics, error_code=error))
    return build(cls, throttle_time=NO_THROTTLE, groups=tuple(groups))


def _fetch_group(
    ctx: RequestContext, cls: Any, group_id: str, topics: Any, require_stable: bool = False
) -> tuple[ErrorCode, Any]:
    """One group's OffsetFetch answer: (group error, tuple of topic entities)."""
    coordinator = active_coordinator(ctx)
    if coordinator is None:
        return NOT_AVAILABLE, ()
    by_id = ctx.api_version >= 10
    wanted: list[tuple[str, int]] | None = None
    refs: dict[str, Any] = {}
    unknown: list[Any] = []
    if topics is not None:
        wanted = []
        for t in topics:
            name = ctx.broker.topic_name(t.topic_id) if by_id else t.name
            if name is None:
                unknown.append(t)
                continue
            refs[name] = t.topic_id if by_id else name
            wanted += [(name, p) for p in t.partition_indexes]
    error, offsets = coordinator.fetch_offsets(group_id, wanted)
    if error is not ErrorCode.none:
        return error, ()
    unstable = coordinator.pending_offsets(group_id) if require_stable else set()
    topic_cls = item_class(cls, "topics")
    part_cls = item_class(topic_cls, "partitions")
    grouped: dict[str, list[Any]] = {}
    for (topic, partition), value in sorted(offsets.items()):
        if (topic, partition) in unstable:
            value = None
        grouped.setdefault(topic, []).append(
            build(
                part_cls,
                partition_index=partition,
                committed_offset=value.offset if value else -1,
                committed_leader_epoch=value.leader_epoch if value else -1,
                metadata=value.metadata if value else "",
                error_code=ErrorCode.unstable_offset_commit
                if (topic, partition) in unstable
                else ErrorCode.none,
            )
        )
    if by_id:
        for name in grouped:
            if name not in refs:
                info = ctx.broker.logs.topics().get(name)
                refs[name] = info.topic_id if info is not None else uuid.UUID(int=0)
    key = "topic_id" if by_id else "name"
    missing = tuple(
        build(
            topic_cls,
            topic_id=t.topic_id,
            partitions=tuple(
                build(part_cls, partition_index=p, committed_offset=-1, metadata="",
                      error_code=ErrorCode.unknown_topic_id)
                for p in t.partition_indexes
            ),
        )
        for t in unknown
    )  # fmt: skip
    return ErrorCode.none, missing + tuple(
        build(topic_cls, **{key: refs.get(name, name)}, partitions=tuple(parts))
        for name, parts in grouped.items()
    )


@handles(47, 0, 0)
async def offset_delete(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = active_coordinator(ctx)
    wanted = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    if coordinator is None:
        error, results = NOT_AVAILABLE, {}
    else:
        error, results = coordinator.delete_offsets(request.group_id, wanted)
    topic_cls = item_class(cls, "topics")
    part_cls = item_class(topic_cls, "partitions")
    grouped: dict[str, list[Any]] = {}
    for (topic, partition), err in results.items():
        grouped.setdefault(topic, []).append(
            build(part_cls, partition_index=partition, error_code=err)
        )
    return build(
        cls,
        error_code=error,
        throttle_time=NO_THROTTLE,
        topics=tuple(build(topic_cls, name=t, partitions=tuple(ps)) for t, ps in grouped.items()),
    )
