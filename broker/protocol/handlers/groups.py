"""Consumer-group APIs: translate kio requests to ``GroupCoordinator`` calls and back.

FindCoordinator (10), JoinGroup (11), Heartbeat (12), LeaveGroup (13), SyncGroup (14),
DescribeGroups (15), ListGroups (16), OffsetCommit (8), OffsetFetch (9), DeleteGroups (42)
and OffsetDelete (47). Every version kio knows is served: the differences between versions
are fields that come and go, which :func:`build` absorbs, plus the shape changes handled
here: FindCoordinator v4 batches keys, LeaveGroup v3 batches members, OffsetFetch v8 batches
groups, and OffsetCommit/OffsetFetch v10 name topics by id.

This broker coordinates every group (single node), so FindCoordinator always names itself.
The protocol logic lives in ``broker.coordinator``; nothing here decides who may do what.
"""

from __future__ import annotations

import logging
import time
import typing
import uuid
from datetime import timedelta
from functools import cache
from typing import Any

from kio.schema.errors import ErrorCode

from broker.coordinator.group_manager import JoinRequest
from broker.coordinator.member import JoinResult, SyncResult
from broker.coordinator.records import OffsetValue
from broker.protocol._entities import NO_THROTTLE, build, has_field
from broker.protocol.registry import RequestContext, handles, response_class

log = logging.getLogger(__name__)

_NOT_AVAILABLE = ErrorCode.coordinator_not_available
_UNAUTHORIZED_OPS = -(2**31)


@cache
def _item(cls: type, field: str) -> Any:
    """The element class of a ``tuple[Nested, ...]`` field (names differ across versions)."""
    hint = typing.get_type_hints(cls)[field]
    for arg in typing.get_args(hint):
        inner = typing.get_args(arg) or (arg,)
        if isinstance(inner[0], type):
            return inner[0]
    raise TypeError(f"{cls.__name__}.{field} is not a tuple of entities")


def _ms(value: timedelta) -> int:
    return int(value / timedelta(milliseconds=1))


def _coordinator(ctx: RequestContext) -> Any:
    coordinator = ctx.broker.coordinator
    return coordinator if coordinator is not None and coordinator.active else None


@handles(10, 0, 6)
async def find_coordinator(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    host, port = ctx.broker.address
    node = ctx.broker.config.node_id
    key_type = getattr(request, "key_type", 0)
    error = ErrorCode.none
    if _coordinator(ctx) is None:
        error = _NOT_AVAILABLE
    elif key_type not in (0, 1):
        error = ErrorCode.invalid_request
    if error is not ErrorCode.none:
        node, host, port = -1, "", -1
    if has_field(cls, "coordinators"):
        entry = _item(cls, "coordinators")
        return build(
            cls,
            throttle_time=NO_THROTTLE,
            coordinators=tuple(
                build(
                    entry,
                    key=key,
                    node_id=node,
                    host=host,
                    port=port,
                    error_code=error,
                    error_message=None,
                )
                for key in request.coordinator_keys
            ),
        )
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=error,
        error_message=None,
        node_id=node,
        host=host,
        port=port,
    )


@handles(11, 0, 9)
async def join_group(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = _coordinator(ctx)
    session_ms = _ms(request.session_timeout)
    rebalance_ms = _ms(getattr(request, "rebalance_timeout", request.session_timeout))
    join = JoinRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        group_instance_id=getattr(request, "group_instance_id", None),
        protocol_type=request.protocol_type,
        protocols=[(p.name, p.metadata) for p in request.protocols],
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=rebalance_ms if rebalance_ms > 0 else session_ms,
        client_id=ctx.client_id or "",
        client_host=ctx.client_host,
        require_known_member_id=ctx.api_version >= 4,
        reason=getattr(request, "reason", None),
    )
    result = (
        await coordinator.join_group(join)
        if coordinator is not None
        else JoinResult(_NOT_AVAILABLE, request.member_id)
    )
    member_cls = _item(cls, "members")
    nullable_name = ctx.api_version >= 7
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=result.error,
        generation_id=result.generation,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name if nullable_name else (result.protocol_name or ""),
        leader=result.leader,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=tuple(
            build(member_cls, member_id=mid, group_instance_id=iid, metadata=meta)
            for mid, iid, meta in result.members
        ),
    )


@handles(14, 0, 5)
async def sync_group(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = _coordinator(ctx)
    result = (
        await coordinator.sync_group(
            request.group_id,
            request.generation_id,
            request.member_id,
            getattr(request, "group_instance_id", None),
            getattr(request, "protocol_type", None),
            getattr(request, "protocol_name", None),
            {a.member_id: a.assignment for a in request.assignments},
        )
        if coordinator is not None
        else SyncResult(_NOT_AVAILABLE)
    )
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )


@handles(12, 0, 4)
async def heartbeat(ctx: RequestContext, request: Any) -> Any:
    coordinator = _coordinator(ctx)
    error = (
        coordinator.heartbeat(
            request.group_id,
            request.member_id,
            getattr(request, "group_instance_id", None),
            request.generation_id,
        )
        if coordinator is not None
        else _NOT_AVAILABLE
    )
    return build(response_class(ctx), throttle_time=NO_THROTTLE, error_code=error)


@handles(13, 0, 5)
async def leave_group(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = _coordinator(ctx)
    batched = has_field(type(request), "members")
    members = (
        [(m.member_id, m.group_instance_id) for m in request.members]
        if batched
        else [(request.member_id, None)]
    )
    if coordinator is None:
        return build(cls, throttle_time=NO_THROTTLE, error_code=_NOT_AVAILABLE, members=())
    errors = coordinator.leave_group(request.group_id, members)
    if not batched:
        return build(cls, throttle_time=NO_THROTTLE, error_code=errors[0])
    entry = _item(cls, "members")
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        members=tuple(
            build(entry, member_id=mid, group_instance_id=iid, error_code=err)
            for (mid, iid), err in zip(members, errors, strict=True)
        ),
    )


@handles(8, 2, 10)
async def offset_commit(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = _coordinator(ctx)
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
            offsets[(name, p.partition_index)] = OffsetValue(
                p.committed_offset,
                getattr(p, "committed_leader_epoch", -1),
                p.committed_metadata or "",
                now,
            )
    if coordinator is None:
        errors = dict.fromkeys(offsets, _NOT_AVAILABLE)
    else:
        errors = coordinator.commit_offsets(
            request.group_id,
            request.generation_id_or_member_epoch,
            request.member_id,
            getattr(request, "group_instance_id", None),
            offsets,
        )
    topic_cls = _item(cls, "topics")
    part_cls = _item(topic_cls, "partitions")
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


@handles(9, 1, 10)
async def offset_fetch(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    if not has_field(cls, "groups"):
        error, topics = _fetch_group(ctx, cls, request.group_id, request.topics)
        if error is not ErrorCode.none and not has_field(cls, "error_code"):
            topics = ()
        return build(cls, throttle_time=NO_THROTTLE, topics=topics, error_code=error)
    group_cls = _item(cls, "groups")
    groups = []
    for g in request.groups:
        error, topics = _fetch_group(ctx, group_cls, g.group_id, g.topics)
        groups.append(build(group_cls, group_id=g.group_id, topics=topics, error_code=error))
    return build(cls, throttle_time=NO_THROTTLE, groups=tuple(groups))


def _fetch_group(
    ctx: RequestContext, cls: Any, group_id: str, topics: Any
) -> tuple[ErrorCode, Any]:
    """One group's OffsetFetch answer: (group error, tuple of topic entities)."""
    coordinator = _coordinator(ctx)
    if coordinator is None:
        return _NOT_AVAILABLE, ()
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
    topic_cls = _item(cls, "topics")
    part_cls = _item(topic_cls, "partitions")
    grouped: dict[str, list[Any]] = {}
    for (topic, partition), value in sorted(offsets.items()):
        grouped.setdefault(topic, []).append(
            build(
                part_cls,
                partition_index=partition,
                committed_offset=value.offset if value else -1,
                committed_leader_epoch=value.leader_epoch if value else -1,
                metadata=value.metadata if value else "",
                error_code=ErrorCode.none,
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


@handles(16, 0, 5)
async def list_groups(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = _coordinator(ctx)
    if coordinator is None:
        return build(cls, throttle_time=NO_THROTTLE, error_code=_NOT_AVAILABLE, groups=())
    listed = coordinator.list_groups(
        getattr(request, "states_filter", ()), getattr(request, "types_filter", ())
    )
    entry = _item(cls, "groups")
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        groups=tuple(
            build(entry, group_id=gid, protocol_type=ptype, group_state=state, group_type="classic")
            for gid, ptype, state in listed
        ),
    )


@handles(15, 0, 6)
async def describe_groups(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = _coordinator(ctx)
    group_cls = _item(cls, "groups")
    member_cls = _item(group_cls, "members")
    out = []
    for group_id in request.groups:
        desc = coordinator.describe_group(group_id) if coordinator is not None else None
        if desc is None:
            error = ErrorCode.group_id_not_found if ctx.api_version >= 6 else ErrorCode.none
            if coordinator is None:
                error = _NOT_AVAILABLE
            out.append(
                build(
                    group_cls,
                    error_code=error,
                    group_id=group_id,
                    group_state="Dead",
                    protocol_type="",
                    protocol_data="",
                    members=(),
                    authorized_operations=_UNAUTHORIZED_OPS,
                )
            )
            continue
        members = tuple(
            build(
                member_cls,
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                member_metadata=m.metadata,
                member_assignment=m.assignment,
            )
            for m in desc.members
        )
        out.append(
            build(
                group_cls,
                error_code=ErrorCode.none,
                group_id=group_id,
                group_state=desc.state,
                protocol_type=desc.protocol_type,
                protocol_data=desc.protocol,
                members=members,
                authorized_operations=_UNAUTHORIZED_OPS,
            )
        )
    return build(cls, throttle_time=NO_THROTTLE, groups=tuple(out))


@handles(42, 0, 2)
async def delete_groups(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = _coordinator(ctx)
    names = list(request.groups_names)
    results = (
        coordinator.delete_groups(names)
        if coordinator is not None
        else dict.fromkeys(names, _NOT_AVAILABLE)
    )
    entry = _item(cls, "results")
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        results=tuple(build(entry, group_id=g, error_code=e) for g, e in results.items()),
    )


@handles(47, 0, 0)
async def offset_delete(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = _coordinator(ctx)
    wanted = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    if coordinator is None:
        error, results = _NOT_AVAILABLE, {}
    else:
        error, results = coordinator.delete_offsets(request.group_id, wanted)
    topic_cls = _item(cls, "topics")
    part_cls = _item(topic_cls, "partitions")
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
