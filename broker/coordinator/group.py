"""One consumer group of the classic rebalance protocol: its members and its state.

States and the only transitions allowed (Kafka's ``ClassicGroupState``)::

    Empty ──join──► PreparingRebalance ──all joined / timeout──► CompletingRebalance
      ▲                 ▲      │ (no member left)                      │ leader's SyncGroup
      └─────────────────┼──────┘                                        ▼
                        └────── join / leave / session expiry ────── Stable
    Empty ──DeleteGroups / offsets expired──► Dead (and forgotten)

This module holds state and the small rules over it (protocol selection, who has rejoined,
who has expired); the request flows that move a group between states live in
``group_manager.py``. Nothing here awaits: a member parked in JoinGroup or SyncGroup is an
``asyncio.Future`` the manager completes, and every method runs to completion on the event
loop, so a group is never observed half-updated and needs no lock.
"""

from __future__ import annotations

import enum
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kio.schema.errors import ErrorCode

from broker.coordinator.consumer_protocol import subscription_topics
from broker.coordinator.member import Member

log = logging.getLogger(__name__)


class GroupState(enum.Enum):
    """The value is the name DescribeGroups and ListGroups report."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_ALLOWED_FROM: dict[GroupState, frozenset[GroupState]] = {
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.EMPTY, GroupState.STABLE, GroupState.COMPLETING_REBALANCE}
    ),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: list[MemberDescription]


class Group:
    """Members, generation and protocol of one group; see the module doc for the states."""

    def __init__(self, group_id: str, now_ms: int) -> None:
        self.group_id = group_id
        self.state = GroupState.EMPTY
        self.state_timestamp = now_ms
        self.generation = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}
        self.pending_members: dict[str, int] = {}
        """Member ids handed out with MEMBER_ID_REQUIRED, to the deadline for their rejoin."""
        self.static_members: dict[str, str] = {}
        """group.instance.id to the member id currently holding it."""
        self.rebalance_deadline: int | None = None
        self.sync_deadline = 0
        """When CompletingRebalance gives up on members that have not sent SyncGroup."""
        self.initial_rebalance = False
        """True while the first rebalance of an empty group waits out the initial delay."""
        self.initial_rebalance_limit = 0

    def __repr__(self) -> str:
        return f"Group({self.group_id!r}, {self.state.value}, gen={self.generation})"

    def transition(self, state: GroupState, now_ms: int) -> None:
        if self.state not in _ALLOWED_FROM[state]:
            raise RuntimeError(f"group {self.group_id}: illegal transition {self.state} -> {state}")
        log.debug("group %s: %s -> %s", self.group_id, self.state.value, state.value)
        self.state = state
        self.state_timestamp = now_ms

    def restore(self, state: GroupState, now_ms: int) -> None:
        """Sets the state of a group reloaded from ``__consumer_offsets`` (no transition)."""
        self.state = state
        self.state_timestamp = now_ms

    @property
    def is_empty(self) -> bool:
        return not self.members and not self.pending_members

    def add_member(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        if member.group_instance_id:
            self.static_members[member.group_instance_id] = member.member_id
        self.pending_members.pop(member.member_id, None)

    def remove_member(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        self.pending_members.pop(member_id, None)
        if member is None:
            return None
        instance = member.group_instance_id
        if instance and self.static_members.get(instance) == member_id:
            del self.static_members[instance]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def replace_member_id(self, old_id: str, new_id: str) -> Member:
        """Gives a static member's slot (and its assignment) to a new member id."""
        member = self.members.pop(old_id)
        member.member_id = new_id
        self.members[new_id] = member
        if member.group_instance_id:
            self.static_members[member.group_instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        return member

    def candidate_protocols(self) -> set[str]:
        """Protocols every current member supports."""
        sets = [set(m.protocol_names()) for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def supports(self, protocol_type: str, protocols: Sequence[tuple[str, Any]]) -> bool:
        """Could a member with these protocols join without breaking the group?"""
        names = {name for name, _ in protocols}
        if not protocol_type or not names:
            return False
        if not self.members:
            return True
        return protocol_type == self.protocol_type and bool(names & self.candidate_protocols())

    def select_protocol(self) -> str:
        """Each member votes for its most preferred common protocol; most votes wins.

        Ties go to the protocol the leader prefers, so the choice is deterministic.
        """
        candidates = self.candidate_protocols()
        votes: Counter[str] = Counter()
        for member in self.members.values():
            votes[next(p for p in member.protocol_names() if p in candidates)] += 1
        leader = self.members.get(self.leader_id or "") or next(iter(self.members.values()))
        order = {name: i for i, name in enumerate(leader.protocol_names())}
        return max(votes, key=lambda name: (votes[name], -order.get(name, len(order))))

    def all_members_joined(self) -> bool:
        return not self.pending_members and all(
            m.join_waiter is not None for m in self.members.values()
        )

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def expired_members(self, now_ms: int) -> list[str]:
        return [
            m.member_id
            for m in self.members.values()
            if not m.is_awaiting and m.heartbeat_deadline < now_ms
        ]

    def expired_pending(self, now_ms: int) -> list[str]:
        return [mid for mid, deadline in self.pending_members.items() if deadline < now_ms]

    def subscribed_topics(self) -> set[str] | None:
        """Topics the members subscribe to, or None if that cannot be known (non-consumer)."""
        if self.protocol_type != "consumer" or not self.members:
            return None if self.members else set()
        topics: set[str] = set()
        for member in self.members.values():
            found = subscription_topics(member.metadata(self.protocol_name))
            if found is None:
                return None
            topics |= found
        return topics

    def describe(self) -> GroupDescription:
        """Kafka's group summary: protocol, member metadata and assignments only once Stable."""
        stable = self.state is GroupState.STABLE
        return GroupDescription(
            group_id=self.group_id,
            state=self.state.value,
            protocol_type=self.protocol_type or "",
            protocol=(self.protocol_name or "") if stable else "",
            members=[
                MemberDescription(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.metadata(self.protocol_name) if stable else b"",
                    m.assignment if stable else b"",
                )
                for m in self.members.values()
            ],
        )

    def validate_offset_commit(
        self, generation: int, member_id: str, instance_id: str | None
    ) -> ErrorCode:
        """Kafka's rule: members commit for their generation; others only into empty groups.

        The old generation may still commit while the group prepares a rebalance (consumers
        commit in onPartitionsRevoked before rejoining), but not while it completes one.
        """
        if generation < 0 and not member_id and not instance_id:
            return ErrorCode.none if self.state is GroupState.EMPTY else ErrorCode.unknown_member_id
        if self.state in (GroupState.EMPTY, GroupState.DEAD):
            return ErrorCode.unknown_member_id
        if instance_id and self.static_members.get(instance_id, member_id) != member_id:
            return ErrorCode.fenced_instance_id
        if member_id not in self.members:
            return ErrorCode.unknown_member_id
        if generation != self.generation:
            return ErrorCode.illegal_generation
        if self.state is GroupState.COMPLETING_REBALANCE:
            return ErrorCode.rebalance_in_progress
        return ErrorCode.none
