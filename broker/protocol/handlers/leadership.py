"""ElectLeaders (43), AlterPartitionReassignments (45), ListPartitionReassignments (46).

Cluster mode: ElectLeaders with the preferred type asks the controller (through
``/admin/preferred_replica_election``) to move each partition back to its first replica and
waits, bounded by the request timeout, for the outcome: NONE when the preferred replica leads
now, ELECTION_NOT_NEEDED when it already did, PREFERRED_LEADER_NOT_AVAILABLE when it is not
alive and in sync. The unclean type is refused per partition (ELIGIBLE_LEADERS_NOT_AVAILABLE
with a message): unclean elections happen only through ``unclean.leader.election.enable``.
Reassignments are written to the topic znode (KIP-455 layout) and finished by the controller
once the new replicas are in sync; any broker accepts them.

Single node: every partition's only replica leads, so ElectLeaders answers
ELECTION_NOT_NEEDED, a reassignment to this broker alone is accepted as a no-op and any other
is INVALID_REPLICA_ASSIGNMENT.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import BrokerError
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol.registry import RequestContext, handles, response_class

PREFERRED, UNCLEAN = 0, 1
_MAX_WAIT_S = 30.0


def _partitions(ctx: RequestContext, wanted: Any) -> list[tuple[str, int]]:
    cluster = ctx.broker.cluster
    if wanted is None:
        if cluster is not None:
            return sorted((t, p) for t, a in cluster.cache.topics.items() for p in a.partitions)
        logs = ctx.broker.logs
        topics = logs.topics() if logs is not None else {}
        return sorted((t, p) for t, info in topics.items() for p in range(info.partitions))
    return [(t.topic, p) for t in wanted for p in t.partitions]


_CACHE_WAIT_S = 10.0
_CACHE_POLL_S = 0.01


@handles(43, 0, 2)
async def elect_leaders(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    topic_cls = nested(cls, "ReplicaElectionResult")
    part_cls = nested(cls, "PartitionResult")
    election = getattr(request, "election_type", PREFERRED)
    wanted = _partitions(ctx, request.topic_partitions)
    results = await _elect(ctx, wanted, election, request.timeout.total_seconds())
    by_topic: dict[str, list[Any]] = {}
    for (topic, p), (code, message) in zip(wanted, results, strict=True):
        by_topic.setdefault(topic, []).append(
            build(part_cls, partition_id=p, error_code=code, error_message=message)
        )
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        replica_election_results=tuple(
            build(topic_cls, topic=t, partition_result=tuple(ps)) for t, ps in by_topic.items()
        ),
    )


async def _elect(
    ctx: RequestContext, wanted: list[tuple[str, int]], election: int, timeout_s: float
) -> list[tuple[ErrorCode, str | None]]:
    cluster = ctx.broker.cluster
    if election != PREFERRED:
        msg = "unclean elections run only with unclean.leader.election.enable=true"
        return [(ErrorCode.eligible_leaders_not_available, msg)] * len(wanted)
    if cluster is None:
        return [(ErrorCode.election_not_needed, None)] * len(wanted)
    from broker.cluster.admin import request_preferred_election

    cache = cluster.cache

    def outcome(tp: tuple[str, int]) -> tuple[ErrorCode, str | None] | None:
        replicas = cache.replicas(*tp)
        state = cache.states.get(tp)
        if not replicas or state is None:
            return ErrorCode.unknown_topic_or_partition, None
        if state.leader == replicas[0]:
            return None
        if replicas[0] not in cache.brokers or replicas[0] not in state.isr:
            return ErrorCode.preferred_leader_not_available, f"broker {replicas[0]} not in sync"
        return None

    results: dict[tuple[str, int], tuple[ErrorCode, str | None]] = {}
    todo = []
    for tp in wanted:
        early = outcome(tp)
        if early is not None:
            results[tp] = early
        elif cache.states[tp].leader == cache.replicas(*tp)[0]:
            results[tp] = (ErrorCode.election_not_needed, None)
        else:
            todo.append(tp)
    if todo:
        await cluster.zk.run(request_preferred_election, todo)
        deadline = time.monotonic() + min(max(timeout_s, 0.0), _MAX_WAIT_S)
        while todo and time.monotonic() < deadline:
            todo = [tp for tp in todo if cache.states[tp].leader != cache.replicas(*tp)[0]]
            if todo:
                await asyncio.sleep(0.02)
        for tp in wanted:
            if tp not in results:
                late = (ErrorCode.request_timed_out, "the controller did not finish in time")
                results[tp] = late if tp in todo else (ErrorCode.none, None)
    return [results[tp] for tp in wanted]


@handles(45, 0, 1)
async def alter_partition_reassignments(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    topic_cls = nested(cls, "ReassignableTopicResponse")
    part_cls = nested(cls, "ReassignablePartitionResponse")
    cluster = ctx.broker.cluster
    topics = []
    for topic in request.topics:
        changes = {
            p.partition_index: None if p.replicas is None else tuple(p.replicas)
            for p in topic.partitions
        }
        code, message = ErrorCode.none, None
        try:
            if cluster is not None:
                from broker.cluster.admin import reassign

                allow_rf = getattr(request, "allow_replication_factor_change", True)
                _check_targets(cluster, topic.name, changes, allow_rf)
                updated = await cluster.zk.run(reassign, topic.name, changes)
                cluster.controller.request("reassignment")
                await _until_cached(cluster, topic.name, updated, changes)
            elif any(r not in (None, (ctx.broker.config.node_id,)) for r in changes.values()):
                code, message = ErrorCode.invalid_replica_assignment, "single broker"
        except BrokerError as exc:
            code, message = exc.error_code, str(exc)
        topics.append(
            build(
                topic_cls, name=topic.name,
                partitions=tuple(
                    build(part_cls, partition_index=p, error_code=code, error_message=message)
                    for p in changes
                ),
            )
        )  # fmt: skip
    return build(
        cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.none, error_message=None,
        responses=tuple(topics),
    )  # fmt: skip


class _InvalidAssignment(BrokerError):
    error_code = ErrorCode.invalid_replica_assignment


def _check_targets(
    cluster: Any, topic: str, changes: dict[int, tuple[int, ...] | None], allow_rf_change: bool
) -> None:
    for p, target in changes.items():
        if target is None:
            continue
        current = cluster.cache.replicas(topic, p)
        removing = cluster.cache.topics[topic].removing.get(p, ()) if current else ()
        if not allow_rf_change and current and len(target) != len(current) - len(removing):
            raise _InvalidAssignment(f"partition {p}: the replication factor would change")
        if not target or len(set(target)) != len(target):
            raise _InvalidAssignment(f"partition {p}: replicas must be distinct and non-empty")
        unknown = [b for b in target if b not in cluster.cache.brokers]
        if unknown:
            raise _InvalidAssignment(f"partition {p}: brokers {unknown} are not alive")


async def _until_cached(
    cluster: Any, name: str, written: Any, changes: dict[int, tuple[int, ...] | None]
) -> None:
    """Waits (bounded) until this broker's metadata cache shows the reassignment just written.

    The znode write is done when ``reassign`` returns, but the cache learns of it through a
    watch; without this wait a ListPartitionReassignments sent right after the answer (as
    ``sluice topics reassign`` does) could find nothing ongoing and report the move finished
    before it started. Either the written (ongoing) assignment or its completed form counts.
    """
    deadline = asyncio.get_running_loop().time() + _CACHE_WAIT_S

    def seen() -> bool:
        cached = cluster.cache.topics.get(name)
        if cached is None:
            return False
        for p, target in changes.items():
            replicas = cached.partitions.get(p)
            ongoing = replicas == written.partitions.get(p)
            finished = (
                target is not None
                and replicas == target
                and p not in cached.adding
                and p not in cached.removing
            )
            if not (ongoing or finished):
                return False
        return True

    while not seen() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(_CACHE_POLL_S)


@handles(46, 0, 0)
async def list_partition_reassignments(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    topic_cls = nested(cls, "OngoingTopicReassignment")
    part_cls = nested(cls, "OngoingPartitionReassignment")
    cluster = ctx.broker.cluster
    topics = []
    if cluster is not None:
        wanted = (
            None
            if request.topics is None
            else {t.name: set(t.partition_indexes) for t in request.topics}
        )
        for name, a in sorted(cluster.cache.topics.items()):
            moving = sorted(set(a.adding) | set(a.removing))
            if wanted is not None:
                moving = [p for p in moving if p in wanted.get(name, ())]
            if moving:
                topics.append(
                    build(
                        topic_cls, name=name,
                        partitions=tuple(
                            build(part_cls, partition_index=p, replicas=a.partitions[p],
                                  adding_replicas=a.adding.get(p, ()),
                                  removing_replicas=a.removing.get(p, ()))
                            for p in moving
                        ),
                    )
                )  # fmt: skip
    return build(
        cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.none, error_message=None,
        topics=tuple(topics),
    )  # fmt: skip
