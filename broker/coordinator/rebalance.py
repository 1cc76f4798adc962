"""The steps of a classic rebalance, from PreparingRebalance to Stable, for one group.

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

Members also leave through here (LeaveGroup, session expiry), since a departure is what
most often starts a rebalance. Every method runs to completion on the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from kio.schema.errors import ErrorCode

from broker.coordinator.group import Group, GroupState
from broker.coordinator.group_store import GroupStore
from broker.coordinator.member import JoinResult, Member, SyncResult
from broker.errors import BrokerError

log = logging.getLogger(__name__)

PREPARING, COMPLETING = GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE
STABLE, EMPTY = GroupState.STABLE, GroupState.EMPTY


@dataclass(frozen=True)
class GroupConfig:
    """Kafka's broker settings for groups (names without the ``group.`` prefix)."""

    min_session_timeout_ms: int = 6_000
    max_session_timeout_ms: int = 1_800_000
    initial_rebalance_delay_ms: int = 3_000


class Rebalancer:
    """Moves groups through a rebalance and persists them at the points Kafka does."""

    def __init__(self, config: GroupConfig, store: GroupStore, clock: Callable[[], int]) -> None:
        self.config = config
        self._store = store
        self._clock = clock

    def join_result(self, group: Group, member: Member) -> JoinResult:
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

    def prepare(self, group: Group, reason: str) -> None:
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
        self.maybe_complete_join(group)

    def extend_initial_delay(self, group: Group) -> None:
        if group.initial_rebalance and group.rebalance_deadline is not None:
            group.rebalance_deadline = min(
                group.rebalance_deadline + self.config.initial_rebalance_delay_ms,
                group.initial_rebalance_limit,
            )

    def maybe_complete_join(self, group: Group) -> None:
        if group.state is PREPARING and not group.initial_rebalance and group.all_members_joined():
            self.complete_join(group)

    def complete_join(self, group: Group) -> None:
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
            self.persist(group)
            return
        group.protocol_name = group.select_protocol()
        group.transition(COMPLETING, now)
        group.sync_deadline = now + group.max_rebalance_timeout_ms()
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
            member.complete_join(self.join_result(group, member))

    def complete_sync(self, group: Group, assignments: dict[str, bytes]) -> None:
        for m in group.members.values():
            m.assignment = assignments.get(m.member_id, b"")
        try:
            self.persist(group, raise_errors=True)
        except BrokerError as exc:
            log.error(
                "group %s: storing generation %d failed: %s", group.group_id, group.generation, exc
            )
            for m in group.members.values():
                m.assignment = b""
                m.complete_sync(SyncResult(ErrorCode.coordinator_not_available))
            self.prepare(group, "group metadata could not be stored")
            return
        now = self._clock()
        group.transition(STABLE, now)
        log.info("group %s: stable at generation %d", group.group_id, group.generation)
        for m in group.members.values():
            m.heartbeat_deadline = now + m.session_timeout_ms
            m.complete_sync(self.sync_result(group, m))

    @staticmethod
    def sync_result(group: Group, member: Member) -> SyncResult:
        return SyncResult(
            ErrorCode.none, member.assignment, group.protocol_type, group.protocol_name
        )

    def remove(self, group: Group, member_id: str, why: str) -> bool:
        member = group.remove_member(member_id)
        if member is None:
            return False
        log.info("group %s: member %s %s", group.group_id, member_id, why)
        member.complete_join(JoinResult(ErrorCode.unknown_member_id, member_id))
        member.complete_sync(SyncResult(ErrorCode.unknown_member_id))
        return True

    def expire_sync(self, group: Group) -> None:
        """Drops members that never sent SyncGroup within the rebalance timeout.

        In CompletingRebalance everyone who has synced is parked until the leader's
        SyncGroup arrives, so the ones not parked are the ones missing; without this a
        leader that heartbeats but never syncs would hold the group there forever.
        """
        missing = [m.member_id for m in group.members.values() if m.sync_waiter is None]
        for member_id in missing:
            self.remove(group, member_id, "did not send SyncGroup in time")
        self.after_removal(group, f"{len(missing)} member(s) never synced")

    def after_removal(self, group: Group, reason: str) -> None:
        if group.state in (STABLE, COMPLETING):
            self.prepare(group, reason)
        elif group.state is PREPARING:
            self.maybe_complete_join(group)

    def persist(self, group: Group, raise_errors: bool = False) -> None:
        try:
            self._store.store(group)
        except BrokerError:
            if raise_errors:
                raise
            log.exception("group %s: storing group metadata failed", group.group_id)
