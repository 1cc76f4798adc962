"""The classic rebalance protocol: JoinGroup, SyncGroup, Heartbeat and LeaveGroup flows.

A rebalance, as Kafka runs it:

1. Something changes membership (a member joins, leaves, changes protocols, or its session
   expires) and the group goes to PreparingRebalance with a deadline of the largest
   ``rebalance.timeout.ms`` among members (``max.poll.interval.ms`` for Java-style
   consumers, which is how a consumer stuck between polls loses its partitions). An Empty
   group instead waits ``group.initial.rebalance.delay.ms`` (extended by each newcomer, up to
   the rebalance timeout) so consumers starting together land in one generation.
2. Members learn of it from REBALANCE_IN_PROGRESS on Heartbeat and send JoinGroup, which is
   parked (a future) until every known member has rejoined or the deadline passes; members
   that did not rejoin by then are dropped.
3. The generation is bumped, a protocol every member supports is chosen, the leader receives
   all members' metadata and the others an empty list: CompletingRebalance.
4. The leader's SyncGroup carries everyone's assignment; the group is written to
   ``__consumer_offsets`` and becomes Stable, and every parked SyncGroup is answered.

JoinGroup v4+ first answers a member without an id with MEMBER_ID_REQUIRED and a fresh id,
so a client that times out and retries cannot leave a ghost member behind. Static members
(``group.instance.id``) skip that step and, when they restart into a Stable group with the
same protocols, take their old slot and assignment without a rebalance.

Timing is driven from outside: :meth:`GroupManager.tick` is called by the coordinator's
background task with the clock's current time, so tests advance a fake clock instead of
sleeping.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from broker.coordinator.group import Group, GroupState, JoinResult, Member, SyncResult
from broker.coordinator.group_store import GroupStore
from broker.errors import BrokerError

log = logging.getLogger(__name__)

PREPARING, COMPLETING = GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE
STABLE, EMPTY, DEAD = GroupState.STABLE, GroupState.EMPTY, GroupState.DEAD


@dataclass(frozen=True)
class GroupConfig:
    """Kafka's broker settings for groups (names without the ``group.`` prefix)."""

    min_session_timeout_ms: int = 6_000
    max_session_timeout_ms: int = 1_800_000
    initial_rebalance_delay_ms: int = 3_000


@dataclass(frozen=True)
class JoinRequest:
    group_id: str
    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    client_id: str
    client_host: str
    require_known_member_id: bool


class GroupManager:
    """All groups of this coordinator and the flows that change them."""

    def __init__(self, config: GroupConfig, store: GroupStore, clock: Callable[[], int]) -> None:
        self.config = config
        self.groups: dict[str, Group] = {}
        self._store = store
        self._clock = clock

    def get_or_create(self, group_id: str) -> Group:
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id, self._clock())
        return group

    # -- JoinGroup -----------------------------------------------------------------------

    async def join(self, req: JoinRequest) -> JoinResult:
        if not req.group_id:
            return JoinResult(ErrorCode.invalid_group_id, req.member_id)
        if not (
            self.config.min_session_timeout_ms
            <= req.session_timeout_ms
            <= self.config.max_session_timeout_ms
        ):
            return JoinResult(ErrorCode.invalid_session_timeout, req.member_id)
        group = self.groups.get(req.group_id)
        if group is None and req.member_id:
            return JoinResult(ErrorCode.unknown_member_id, req.member_id)
        group = self.get_or_create(req.group_id)
        if group.state is DEAD:
            return JoinResult(ErrorCode.coordinator_not_available, req.member_id)
        if not group.supports(req.protocol_type, req.protocols):
            return JoinResult(ErrorCode.inconsistent_group_protocol, req.member_id)
        outcome = self._join_existing(group, req) if req.member_id else self._join_new(group, req)
        return await outcome if isinstance(outcome, asyncio.Future) else outcome

    def _join_new(self, group: Group, req: JoinRequest) -> JoinResult | asyncio.Future[JoinResult]:
        new_id = f"{req.group_instance_id or req.client_id}-{uuid.uuid4()}"
        instance = req.group_instance_id
        if instance and instance in group.static_members:
            return self._replace_static(group, group.static_members[instance], new_id, req)
        if req.require_known_member_id and not instance:
            group.pending_members[new_id] = self._clock() + req.session_timeout_ms
            return JoinResult(ErrorCode.member_id_required, new_id)
        return self._add_and_rebalance(group, new_id, req)

    def _join_existing(
        self, group: Group, req: JoinRequest
    ) -> JoinResult | asyncio.Future[JoinResult]:
        if req.member_id in group.pending_members:
            return self._add_and_rebalance(group, req.member_id, req)
        member = group.members.get(req.member_id)
        if member is None:
            return JoinResult(ErrorCode.unknown_member_id, req.member_id)
        if (
            req.group_instance_id
            and group.static_members.get(req.group_instance_id) != member.member_id
        ):
            return JoinResult(ErrorCode.fenced_instance_id, req.member_id)
        if group.state is PREPARING:
            return self._update_and_park(group, member, req)
        if group.state is COMPLETING and member.matches(req.protocols):
            return self._join_result(group, member)
        if (
            group.state is STABLE
            and member.member_id != group.leader_id
            and member.matches(req.protocols)
        ):
            return self._join_result(group, member)
        if group.state in (COMPLETING, STABLE):
            waiter = self._update_and_park(group, member, req)
            self._prepare_rebalance(group, f"member {member.member_id} rejoined")
            return waiter
        return JoinResult(ErrorCode.unknown_member_id, req.member_id)

    def _replace_static(
        self, group: Group, old_id: str, new_id: str, req: JoinRequest
    ) -> JoinResult | asyncio.Future[JoinResult]:
        old = group.members[old_id]
        old.complete_join(JoinResult(ErrorCode.fenced_instance_id, old_id))
        old.complete_sync(SyncResult(ErrorCode.fenced_instance_id))
        member = group.replace_member_id(old_id, new_id)
        log.info(
            "group %s: static member %s now has id %s",
            group.group_id,
            req.group_instance_id,
            new_id,
        )
        if group.state is STABLE and member.matches(req.protocols):
            member.session_timeout_ms = req.session_timeout_ms
            member.rebalance_timeout_ms = req.rebalance_timeout_ms
            member.heartbeat_deadline = self._clock() + member.session_timeout_ms
            self._persist(group)
            result = self._join_result(group, member)
            result.skip_assignment = member.member_id == group.leader_id
            return result
        waiter = self._update_and_park(group, member, req)
        if group.state is PREPARING:
            self._maybe_complete_join(group)
        else:
            self._prepare_rebalance(group, f"static member {req.group_instance_id} rejoined")
        return waiter

    def _add_and_rebalance(
        self, group: Group, member_id: str, req: JoinRequest
    ) -> asyncio.Future[JoinResult]:
        member = Member(
            member_id=member_id,
            group_instance_id=req.group_instance_id,
            client_id=req.client_id,
            client_host=req.client_host,
            session_timeout_ms=req.session_timeout_ms,
            rebalance_timeout_ms=req.rebalance_timeout_ms,
            protocol_type=req.protocol_type,
            protocols=list(req.protocols),
        )
        group.add_member(member)
        waiter = self._park(member)
        log.info("group %s: member %s joined", group.group_id, member_id)
        if group.state is PREPARING:
            self._extend_initial_delay(group)
            self._maybe_complete_join(group)
        else:
            self._prepare_rebalance(group, f"member {member_id} joined")
        return waiter

    def _update_and_park(
        self, group: Group, member: Member, req: JoinRequest
    ) -> asyncio.Future[JoinResult]:
        member.protocols = list(req.protocols)
        member.session_timeout_ms = req.session_timeout_ms
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.complete_join(JoinResult(ErrorCode.rebalance_in_progress, member.member_id))
        waiter = self._park(member)
        if group.state is PREPARING:
            self._maybe_complete_join(group)
        return waiter

    @staticmethod
    def _park(member: Member) -> asyncio.Future[JoinResult]:
        waiter: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        member.join_waiter = waiter
        return waiter

    def _join_result(self, group: Group, member: Member) -> JoinResult:
        is_leader = member.member_id == group.leader_id
        return JoinResult(
            ErrorCode.none,
            member.member_id,
            group.generation,
            group.protocol_type,
            group.protocol_name,
            group.leader_id or "",
            [
                (m.member_id, m.group_instance_id, m.metadata(group.protocol_name))
                for m in group.members.values()
            ]
            if is_leader
            else [],
        )

    # -- rebalance -----------------------------------------------------------------------

    def _prepare_rebalance(self, group: Group, reason: str) -> None:
        now = self._clock()
        if group.state is COMPLETING:
            for m in group.members.values():
                m.assignment = b""
                m.complete_sync(SyncResult(ErrorCode.rebalance_in_progress))
        if group.state is EMPTY and self.config.initial_rebalance_delay_ms > 0:
            group.initial_rebalance = True
            group.initial_rebalance_limit = now + group.max_rebalance_timeout_ms()
            group.rebalance_deadline = min(
                now + self.config.initial_rebalance_delay_ms, group.initial_rebalance_limit
            )
        else:
            group.initial_rebalance = False
            group.rebalance_deadline = now + group.max_rebalance_timeout_ms()
        group.transition(PREPARING, now)
        log.info(
            "group %s: preparing rebalance (generation %d): %s",
            group.group_id,
            group.generation,
            reason,
        )
        self._maybe_complete_join(group)

    def _extend_initial_delay(self, group: Group) -> None:
        if group.initial_rebalance and group.rebalance_deadline is not None:
            group.rebalance_deadline = min(
                group.rebalance_deadline + self.config.initial_rebalance_delay_ms,
                group.initial_rebalance_limit,
            )

    def _maybe_complete_join(self, group: Group) -> None:
        if group.state is PREPARING and not group.initial_rebalance and group.all_members_joined():
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        now = self._clock()
        for member_id in [m.member_id for m in group.members.values() if m.join_waiter is None]:
            log.info(
                "group %s: member %s did not rejoin in time; removing it", group.group_id, member_id
            )
            group.remove_member(member_id)
        group.rebalance_deadline = None
        group.initial_rebalance = False
        group.generation += 1
        if not group.members:
            group.protocol_name = None
            group.transition(EMPTY, now)
            log.info("group %s: empty at generation %d", group.group_id, group.generation)
            self._persist(group)
            return
        group.protocol_name = group.select_protocol()
        group.transition(COMPLETING, now)
        log.info(
            "group %s: generation %d with %d members, protocol %s, leader %s",
            group.group_id,
            group.generation,
            len(group.members),
            group.protocol_name,
            group.leader_id,
        )
        for member in group.members.values():
            member.heartbeat_deadline = now + member.session_timeout_ms
            member.complete_join(self._join_result(group, member))

    # -- SyncGroup -----------------------------------------------------------------------

    async def sync(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: dict[str, bytes],
    ) -> SyncResult:
        group = self.groups.get(group_id)
        if group is None or group.state is DEAD:
            return SyncResult(ErrorCode.unknown_member_id)
        error = self._check_member(group, member_id, group_instance_id, generation)
        if error is not ErrorCode.none:
            return SyncResult(error)
        if (protocol_type and protocol_type != group.protocol_type) or (
            protocol_name and protocol_name != group.protocol_name
        ):
            return SyncResult(ErrorCode.inconsistent_group_protocol)
        member = group.members[member_id]
        if group.state is PREPARING:
            return SyncResult(ErrorCode.rebalance_in_progress)
        if group.state is STABLE:
            member.heartbeat_deadline = self._clock() + member.session_timeout_ms
            return self._sync_result(group, member)
        member.complete_sync(SyncResult(ErrorCode.rebalance_in_progress))
        waiter: asyncio.Future[SyncResult] = asyncio.get_running_loop().create_future()
        member.sync_waiter = waiter
        if member_id == group.leader_id:
            self._complete_sync(group, assignments)
        return await waiter

    def _complete_sync(self, group: Group, assignments: dict[str, bytes]) -> None:
        for m in group.members.values():
            m.assignment = assignments.get(m.member_id, b"")
        try:
            self._persist(group, raise_errors=True)
        except BrokerError as exc:
            log.error(
                "group %s: storing generation %d failed: %s", group.group_id, group.generation, exc
            )
            for m in group.members.values():
                m.assignment = b""
                m.complete_sync(SyncResult(ErrorCode.coordinator_not_available))
            self._prepare_rebalance(group, "group metadata could not be stored")
            return
        now = self._clock()
        group.transition(STABLE, now)
        log.info("group %s: stable at generation %d", group.group_id, group.generation)
        for m in group.members.values():
            m.heartbeat_deadline = now + m.session_timeout_ms
            m.complete_sync(self._sync_result(group, m))

    @staticmethod
    def _sync_result(group: Group, member: Member) -> SyncResult:
        return SyncResult(
            ErrorCode.none, member.assignment, group.protocol_type, group.protocol_name
        )

    # -- Heartbeat, LeaveGroup, expiry -----------------------------------------------------

    def _check_member(
        self, group: Group, member_id: str, instance_id: str | None, generation: int
    ) -> ErrorCode:
        member = group.members.get(member_id)
        if (
            instance_id
            and instance_id in group.static_members
            and group.static_members[instance_id] != member_id
        ):
            return ErrorCode.fenced_instance_id
        if member is None:
            return ErrorCode.unknown_member_id
        if generation != group.generation:
            return ErrorCode.illegal_generation
        return ErrorCode.none

    def heartbeat(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation: int
    ) -> ErrorCode:
        group = self.groups.get(group_id)
        if group is None or group.state in (EMPTY, DEAD):
            return ErrorCode.unknown_member_id
        error = self._check_member(group, member_id, group_instance_id, generation)
        if error is not ErrorCode.none:
            return error
        member = group.members[member_id]
        member.heartbeat_deadline = self._clock() + member.session_timeout_ms
        return ErrorCode.rebalance_in_progress if group.state is PREPARING else ErrorCode.none

    def touch(self, group: Group, member_id: str) -> None:
        """Counts a valid OffsetCommit as a heartbeat, as Kafka does."""
        member = group.members.get(member_id)
        if member is not None:
            member.heartbeat_deadline = self._clock() + member.session_timeout_ms

    def leave(self, group_id: str, members: Sequence[tuple[str, str | None]]) -> list[ErrorCode]:
        """Removes each (member_id, group_instance_id); one error code per entry."""
        group = self.groups.get(group_id)
        errors: list[ErrorCode] = []
        removed: list[str] = []
        for member_id, instance_id in members:
            if group is None or group.state is DEAD:
                errors.append(ErrorCode.unknown_member_id)
                continue
            if instance_id:
                holder = group.static_members.get(instance_id)
                if holder is None:
                    errors.append(ErrorCode.unknown_member_id)
                    continue
                if member_id and member_id != holder:
                    errors.append(ErrorCode.fenced_instance_id)
                    continue
                member_id = holder
            if member_id in group.pending_members:
                del group.pending_members[member_id]
            elif not self._remove(group, member_id, "left the group"):
                errors.append(ErrorCode.unknown_member_id)
                continue
            removed.append(member_id)
            errors.append(ErrorCode.none)
        if group is not None and removed:
            self._after_removal(group, f"{len(removed)} member(s) left")
        return errors

    def _remove(self, group: Group, member_id: str, why: str) -> bool:
        member = group.remove_member(member_id)
        if member is None:
            return False
        log.info("group %s: member %s %s", group.group_id, member_id, why)
        member.complete_join(JoinResult(ErrorCode.unknown_member_id, member_id))
        member.complete_sync(SyncResult(ErrorCode.unknown_member_id))
        return True

    def _after_removal(self, group: Group, reason: str) -> None:
        if group.state in (STABLE, COMPLETING):
            self._prepare_rebalance(group, reason)
        elif group.state is PREPARING:
            self._maybe_complete_join(group)

    def tick(self) -> None:
        """Expires sessions, pending member ids and rebalance deadlines as of now."""
        now = self._clock()
        for group in list(self.groups.values()):
            for member_id in group.expired_pending(now):
                del group.pending_members[member_id]
                log.info("group %s: pending member %s never rejoined", group.group_id, member_id)
            expired = [
                m for m in group.expired_members(now) if self._remove(group, m, "session expired")
            ]
            if expired:
                self._after_removal(group, f"session of {', '.join(expired)} expired")
            if group.state is PREPARING and group.rebalance_deadline is not None:
                if now >= group.rebalance_deadline:
                    group.initial_rebalance = False
                    self._complete_join(group)
                else:
                    self._maybe_complete_join(group)

    def _persist(self, group: Group, raise_errors: bool = False) -> None:
        try:
            self._store.store(group)
        except BrokerError:
            if raise_errors:
                raise
            log.exception("group %s: storing group metadata failed", group.group_id)
