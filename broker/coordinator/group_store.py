"""Group metadata to and from ``__consumer_offsets`` records.

A group is written when it becomes Stable (with every member's assignment), when it becomes
Empty (so the generation keeps counting up after a restart), when a static member takes a new
member id, and as a tombstone when it is deleted. On load, a group with members comes back
Stable with fresh session deadlines: members that are still alive heartbeat on with their
generation and never notice the restart; members that died expire like any other.
"""

from __future__ import annotations

from collections.abc import Callable

from broker.coordinator.group import Group, GroupState
from broker.coordinator.member import Member
from broker.coordinator.offsets_topic import OffsetsTopic
from broker.coordinator.records import (
    GroupKey,
    GroupValue,
    MemberValue,
    decode_group,
    encode_group,
)


class GroupStore:
    """Writes and restores group metadata records."""

    def __init__(self, topic: OffsetsTopic, clock: Callable[[], int]) -> None:
        self._topic = topic
        self._clock = clock

    def store(self, group: Group) -> None:
        """Appends the group's current metadata; raises the storage error on failure."""
        self._topic.append(
            group.group_id, [(GroupKey(group.group_id), encode_group(to_value(group)))]
        )

    def delete(self, group_id: str) -> None:
        self._topic.append(group_id, [(GroupKey(group_id), None)])

    def restore(self, group_id: str, raw: bytes) -> Group:
        """Rebuilds a group from its newest metadata record (raises ValueError if unreadable)."""
        value = decode_group(raw)
        now = self._clock()
        group = Group(group_id, now)
        group.generation = value.generation
        group.protocol_name = value.protocol
        for mv in value.members:
            group.add_member(
                Member(
                    member_id=mv.member_id,
                    group_instance_id=mv.group_instance_id,
                    client_id=mv.client_id,
                    client_host=mv.client_host,
                    session_timeout_ms=mv.session_timeout_ms,
                    rebalance_timeout_ms=mv.rebalance_timeout_ms,
                    protocol_type=value.protocol_type,
                    protocols=[(value.protocol or "", mv.subscription)],
                    assignment=mv.assignment,
                    heartbeat_deadline=now + mv.session_timeout_ms,
                )
            )
        group.protocol_type = value.protocol_type or group.protocol_type
        if value.leader in group.members:
            group.leader_id = value.leader
        state = GroupState.STABLE if group.members else GroupState.EMPTY
        # an empty group's timestamp is when it emptied: offset retention counts from there
        since = value.current_state_timestamp
        group.restore(state, since if state is GroupState.EMPTY and since > 0 else now)
        return group


def to_value(group: Group) -> GroupValue:
    return GroupValue(
        protocol_type=group.protocol_type or "",
        generation=group.generation,
        protocol=group.protocol_name,
        leader=group.leader_id,
        current_state_timestamp=group.state_timestamp,
        members=tuple(
            MemberValue(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                session_timeout_ms=m.session_timeout_ms,
                subscription=m.metadata(group.protocol_name),
                assignment=m.assignment,
            )
            for m in group.members.values()
        ),
    )
