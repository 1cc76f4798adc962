"""Consumer-group APIs: translate kio requests to ``GroupCoordinator`` calls and back.

FindCoordinator (10), JoinGroup (11), Heartbeat (12), LeaveGroup (13), SyncGroup (14),
DescribeGroups (15), ListGroups (16) and DeleteGroups (42); the offset APIs (OffsetCommit,
OffsetFetch, OffsetDelete) are in ``group_offsets.py``. Every version Kafka 3.x or kio knows
is served: the differences between versions are fields that come and go, which :func:`build`
absorbs, plus the shape changes handled here: FindCoordinator v4 batches keys, LeaveGroup v3
batches members.

This broker coordinates every group (single node), so FindCoordinator always names itself;
with key type 1 (a transactional id) it names the transaction coordinator (itself on a single
node; the leader of the id's ``__transaction_state`` partition in a cluster).
The protocol logic lives in ``broker.coordinator``; nothing here decides who may do what.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from kio.schema.errors import ErrorCode

from broker.coordinator.group_manager import JoinRequest
from broker.coordinator.member import JoinResult, SyncResult
from broker.protocol._entities import NO_THROTTLE, build, has_field, item_class
from broker.protocol.handlers._group_common import (
    NOT_AVAILABLE,
    active_coordinator,
)
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.acl import CLUSTER_NAME, AclOperation, ResourceType
from broker.security.authorizer import allowed

log = logging.getLogger(__name__)

_UNAUTHORIZED_OPS = -(2**31)
_TRANSACTION_KEY = 1


def _ms(value: timedelta) -> int:
    return int(value / timedelta(milliseconds=1))


def _on_listener(
    ctx: RequestContext, found: tuple[int, str, int, Any]
) -> tuple[int, str, int, Any]:
    """A cluster coordinator's address on the listener this client uses."""
    info = ctx.broker.cluster.cache.brokers.get(found[0])
    if info is None:
        return found
    return (found[0], *info.address_for(ctx.listener), found[3])


@handles(10, 0, 6)
async def find_coordinator(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    host, port = ctx.broker.advertised(ctx.listener)
    node = ctx.broker.config.node_id
    key_type = getattr(request, "key_type", 0)
    error = ErrorCode.none
    if ctx.broker.cluster is not None:
        from broker.cluster.groups import find_coordinator as cluster_find
        from broker.transaction.cluster import find_coordinator as txn_find

        keys = request.coordinator_keys if has_field(cls, "coordinators") else [request.key]
        if key_type == _TRANSACTION_KEY:
            found = [await txn_find(ctx.broker, key) for key in keys]
        else:
            found = [await cluster_find(ctx.broker, key, key_type) for key in keys]
        return _coordinator_response(cls, keys, [_on_listener(ctx, f) for f in found])
    if key_type == _TRANSACTION_KEY:
        txns = ctx.broker.transactions
        if txns is None or not txns.active:
            error = NOT_AVAILABLE
        else:
            txns.ensure_local_topic()  # __transaction_state is created on first use
    elif active_coordinator(ctx) is None:
        error = NOT_AVAILABLE
    elif key_type != 0:
        error = ErrorCode.invalid_request
    if error is not ErrorCode.none:
        node, host, port = -1, "", -1
    if has_field(cls, "coordinators"):
        entry = item_class(cls, "coordinators")
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


def _coordinator_response(
    cls: Any, keys: list[str], found: list[tuple[int, str, int, ErrorCode]]
) -> Any:
    if has_field(cls, "coordinators"):
        entry = item_class(cls, "coordinators")
        return build(
            cls,
            throttle_time=NO_THROTTLE,
            coordinators=tuple(
                build(entry, key=key, node_id=n, host=h, port=p, error_code=e, error_message=None)
                for key, (n, h, p, e) in zip(keys, found, strict=True)
            ),
        )
    node, host, port, error = found[0]
    return build(
        cls, throttle_time=NO_THROTTLE, error_code=error, error_message=None, node_id=node,
        host=host, port=port,
    )  # fmt: skip


@handles(11, 0, 9)
async def join_group(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = active_coordinator(ctx)
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
        else JoinResult(NOT_AVAILABLE, request.member_id)
    )
    member_cls = item_class(cls, "members")
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
    coordinator = active_coordinator(ctx)
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
        else SyncResult(NOT_AVAILABLE)
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
    coordinator = active_coordinator(ctx)
    error = (
        coordinator.heartbeat(
            request.group_id,
            request.member_id,
            getattr(request, "group_instance_id", None),
            request.generation_id,
        )
        if coordinator is not None
        else NOT_AVAILABLE
    )
    return build(response_class(ctx), throttle_time=NO_THROTTLE, error_code=error)


@handles(13, 0, 5)
async def leave_group(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = active_coordinator(ctx)
    batched = has_field(type(request), "members")
    members = (
        [(m.member_id, m.group_instance_id) for m in request.members]
        if batched
        else [(request.member_id, None)]
    )
    if coordinator is None:
        return build(cls, throttle_time=NO_THROTTLE, error_code=NOT_AVAILABLE, members=())
    errors = coordinator.leave_group(request.group_id, members)
    if not batched:
        return build(cls, throttle_time=NO_THROTTLE, error_code=errors[0])
    entry = item_class(cls, "members")
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        members=tuple(
            build(entry, member_id=mid, group_instance_id=iid, error_code=err)
            for (mid, iid), err in zip(members, errors, strict=True)
        ),
    )


@handles(16, 0, 5)
async def list_groups(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    coordinator = active_coordinator(ctx)
    if coordinator is None:
        return build(cls, throttle_time=NO_THROTTLE, error_code=NOT_AVAILABLE, groups=())
    listed = coordinator.list_groups(
        getattr(request, "states_filter", ()), getattr(request, "types_filter", ())
    )
    if ctx.broker.authorizer is not None and not allowed(
        ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME
    ):  # Kafka: DESCRIBE on the cluster lists all groups, else those with DESCRIBE on the group
        listed = [
            g for g in listed if allowed(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, g[0])
        ]
    entry = item_class(cls, "groups")
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
    coordinator = active_coordinator(ctx)
    group_cls = item_class(cls, "groups")
    member_cls = item_class(group_cls, "members")
    out = []
    for group_id in request.groups:
        refused = not allowed(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id)
        desc = None if refused or coordinator is None else coordinator.describe_group(group_id)
        if desc is None or not coordinator.owns(group_id):
            error = ErrorCode.group_id_not_found if ctx.api_version >= 6 else ErrorCode.none
            if refused:  # per group, as Kafka answers
                error = ErrorCode.group_authorization_failed
            elif coordinator is None:
                error = NOT_AVAILABLE
            elif not coordinator.owns(group_id):
                error = ErrorCode.not_coordinator
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
    coordinator = active_coordinator(ctx)
    names = list(request.groups_names)
    permitted = [g for g in names if allowed(ctx, AclOperation.DELETE, ResourceType.GROUP, g)]
    results = dict.fromkeys(names, ErrorCode.group_authorization_failed)  # per group, as Kafka
    if permitted:
        results.update(
            coordinator.delete_groups(permitted)
            if coordinator is not None
            else dict.fromkeys(permitted, NOT_AVAILABLE)
        )
    entry = item_class(cls, "results")
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        results=tuple(build(entry, group_id=g, error_code=e) for g, e in results.items()),
    )
