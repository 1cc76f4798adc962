"""Request flows of the classic group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup.

Each flow validates the request against the group (member id, instance id, generation,
protocols), updates the member, and leaves state changes to ``Rebalancer`` (rebalance.py),
which documents the rebalance itself. A JoinGroup or SyncGroup that must wait is parked as a
future on the member and answered when the rebalance reaches the right step.

JoinGroup v4+ first answers a member without an id with MEMBER_ID_REQUIRED and a fresh id,
so a client that times out and retries cannot leave a ghost member behind. Static members
(``group.instance.id``) skip that step and, when they restart into a Stable group with the
same protocols, take their old slot and assignment without a rebalance (the old member id is
fenced).

Timing is driven from outside: :meth:`GroupManager.tick` is called by the coordinator's
background task, and every deadline is computed from the injected clock, so tests advance a
fake clock instead of sleeping. A group whose tick raises is logged by id, retried on a
schedule and listed in ``tick_failures``; the other groups' sessions still expire.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from kio.schema.errors import ErrorCode

from broker.background import FailureTracker
from broker.coordinator.group import Group, GroupState
from broker.coordinator.group_store import GroupStore
from broker.coordinator.member import JoinResult, Member, SyncResult
from broker.coordinator.rebalance import GroupConfig, Rebalancer

log = logging.getLogger(__name__)

TICK_RETRY_MS = (1_000, 5_000, 30_000, 60_000)
PREPARING, COMPLETING = GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE
STABLE, EMPTY, DEAD = GroupState.STABLE, GroupState.EMPTY, GroupState.DEAD


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
    reason: str | None = None
    """Why the client (re)joins (JoinGroup v8+, KIP-800); only logged."""


class GroupManager:
    """All groups of this coordinator and the flows that change them."""

    def __init__(self, config: GroupConfig, store: GroupStore, clock: Callable[[], int]) -> None:
        self.config = config
        self.groups: dict[str, Group] = {}
        self._clock = clock
        self.rebalance = Rebalancer(config, store, clock)
        self.tick_failures = FailureTracker("group expiry", TICK_RETRY_MS, logger=log, unit="group")

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
            return self.rebalance.join_result(group, member)
        if (
            group.state is STABLE
            and member.member_id != group.leader_id
            and member.matches(req.protocols)
        ):
            return self.rebalance.join_result(group, member)
        if group.state in (COMPLETING, STABLE):
            waiter = self._update_and_park(group, member, req)
            self.rebalance.prepare(group, f"member {member.member_id} rejoined{_why(req)}")
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
            self.rebalance.persist(group)
            result = self.rebalance.join_result(group, member)
            result.skip_assignment = member.member_id == group.leader_id
            return result
        waiter = self._update_and_park(group, member, req)
        if group.state is PREPARING:
            self.rebalance.maybe_complete_join(group)
        else:
            self.rebalance.prepare(group, f"static member {req.group_instance_id} rejoined")
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
            self.rebalance.extend_initial_delay(group)
            self.rebalance.maybe_complete_join(group)
        else:
            self.rebalance.prepare(group, f"member {member_id} joined{_why(req)}")
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
            self.rebalance.maybe_complete_join(group)
        return waiter

    @staticmethod
    def _park(member: Member) -> asyncio.Future[JoinResult]:
        waiter: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        member.join_waiter = waiter
        return waiter

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
            return self.rebalance.sync_result(group, member)
        member.complete_sync(SyncResult(ErrorCode.rebalance_in_progress))
        waiter: asyncio.Future[SyncResult] = asyncio.get_running_loop().create_future()
        member.sync_waiter = waiter
        if member_id == group.leader_id:
            self.rebalance.complete_sync(group, assignments)
        return await waiter

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
                # never a real member: nothing to rebalance, but a join may be waiting on it
                del group.pending_members[member_id]
                self.rebalance.maybe_complete_join(group)
            elif self.rebalance.remove(group, member_id, "left the group"):
                removed.append(member_id)
            else:
                errors.append(ErrorCode.unknown_member_id)
                continue
            errors.append(ErrorCode.none)
        if group is not None and removed:
            self.rebalance.after_removal(group, f"{len(removed)} member(s) left")
        return errors

    def tick(self) -> None:
        """Expires sessions, pending member ids and rebalance deadlines as of now."""
        now = self._clock()
        for group in list(self.groups.values()):
            self.tick_failures.run(group.group_id, now, partial(self._tick_group, group, now))
        self.tick_failures.retain(self.groups)

    def _tick_group(self, group: Group, now: int) -> int:
        """One group's deadlines; a failure stays with this group (see ``tick``)."""
        for member_id in group.expired_pending(now):
            del group.pending_members[member_id]
            log.info("group %s: pending member %s never rejoined", group.group_id, member_id)
        expired = [
            m
            for m in group.expired_members(now)
            if self.rebalance.remove(group, m, "session expired")
        ]
        if expired:
            self.rebalance.after_removal(group, f"session of {', '.join(expired)} expired")
        if group.state is COMPLETING and now >= group.sync_deadline:
            self.rebalance.expire_sync(group)
        if group.state is PREPARING and group.rebalance_deadline is not None:
            if now >= group.rebalance_deadline:
                group.initial_rebalance = False
                self.rebalance.complete_join(group)
            else:
                self.rebalance.maybe_complete_join(group)
        return 0


def _why(req: JoinRequest) -> str:
    return f" ({req.reason})" if req.reason else ""
