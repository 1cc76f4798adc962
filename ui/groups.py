"""Consumer groups for the console: members, assignments, committed offsets, lag, resets.

Lag is the partition's end offset minus the group's committed offset, both read now; a
partition the group never committed shows no lag rather than a guess. Offsets can only be reset
while a group has no members (state Empty or Dead), as ``kafka-consumer-groups --reset-offsets``
insists: a live member would overwrite the reset with its next commit, and a silently lost reset
is worse than a clear refusal.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

from ui.kafka_admin import TIMEOUT, KafkaAdmin

INACTIVE_STATES = {"EMPTY", "DEAD", "UNKNOWN"}


class GroupBusyError(Exception):
    """A reset was asked for a group that still has members."""


def _state(value: Any) -> str:
    return str(getattr(value, "name", value) or "UNKNOWN").upper()


def list_groups(admin: KafkaAdmin) -> list[dict[str, Any]]:
    listing = admin.admin.list_consumer_groups(request_timeout=TIMEOUT).result(TIMEOUT)
    ids = sorted(g.group_id for g in listing.valid)
    if not ids:
        return []
    details = {g: describe(admin, g) for g in ids}
    return [
        {
            "group_id": g,
            "state": d["state"],
            "members": len(d["members"]),
            "topics": sorted({p["topic"] for p in d["offsets"]}),
            "lag": sum(p["lag"] or 0 for p in d["offsets"]),
        }
        for g, d in details.items()
    ]


def describe(admin: KafkaAdmin, group_id: str) -> dict[str, Any]:
    """Members with their assignments, and per partition: committed offset, end offset, lag."""
    desc = admin.admin.describe_consumer_groups([group_id], request_timeout=TIMEOUT)[
        group_id
    ].result(TIMEOUT)
    members = [
        {
            "member_id": m.member_id,
            "client_id": m.client_id,
            "host": m.host,
            "assignment": [
                {"topic": tp.topic, "partition": tp.partition}
                for tp in (m.assignment.topic_partitions if m.assignment else [])
            ],
        }
        for m in desc.members
    ]
    committed = committed_offsets(admin, group_id)
    parts = set(committed) | {
        (a["topic"], a["partition"]) for m in members for a in m["assignment"]
    }
    marks = admin.watermarks(sorted(parts))
    offsets = []
    for topic, partition in sorted(parts):
        offset = committed.get((topic, partition))
        end = marks[(topic, partition)][1]
        offsets.append({
            "topic": topic,
            "partition": partition,
            "committed": offset,
            "start_offset": marks[(topic, partition)][0],
            "end_offset": end,
            "lag": None if offset is None else max(end - offset, 0),
        })  # fmt: skip
    return {
        "group_id": group_id,
        "state": _state(desc.state),
        "protocol": getattr(desc, "partition_assignor", None),
        "coordinator": getattr(desc.coordinator, "id", None),
        "members": members,
        "offsets": offsets,
    }


def committed_offsets(admin: KafkaAdmin, group_id: str) -> dict[tuple[str, int], int]:
    request = [ConsumerGroupTopicPartitions(group_id)]
    result = admin.admin.list_consumer_group_offsets(request, request_timeout=TIMEOUT)
    answer = result[group_id].result(TIMEOUT)
    return {
        (tp.topic, tp.partition): tp.offset
        for tp in answer.topic_partitions
        if tp.offset is not None and tp.offset >= 0
    }


def reset_offsets(
    admin: KafkaAdmin,
    group_id: str,
    *,
    to: str,
    topic: str | None = None,
    offset: int | None = None,
    timestamp_ms: int | None = None,
) -> list[dict[str, Any]]:
    """Commits new offsets for the group's partitions (of ``topic`` only, when given).

    ``to`` is ``earliest``, ``latest``, ``offset`` (clamped into each partition's range) or
    ``timestamp`` (the first offset at or after it; the end when there is none). Returns the
    offsets written. Raises GroupBusyError while the group has members, ValueError on bad input.
    """
    current = describe(admin, group_id)
    if current["members"] or current["state"] not in INACTIVE_STATES:
        raise GroupBusyError(
            f"Group {group_id} is {current['state']} with {len(current['members'])} member(s); "
            "stop its consumers before resetting offsets"
        )
    parts = [
        (p["topic"], p["partition"])
        for p in current["offsets"]
        if topic is None or p["topic"] == topic
    ]
    if topic is not None and not parts:
        md = admin.metadata().topics.get(topic)
        parts = [(topic, p) for p in sorted(md.partitions)] if md is not None else []
    if not parts:
        raise ValueError(f"Group {group_id} has no partitions to reset")
    marks = admin.watermarks(parts)
    targets: dict[tuple[str, int], int] = {}
    if to == "earliest":
        targets = {p: marks[p][0] for p in parts}
    elif to == "latest":
        targets = {p: marks[p][1] for p in parts}
    elif to == "offset":
        if offset is None:
            raise ValueError("offset is required when resetting to an offset")
        targets = {p: min(max(offset, marks[p][0]), marks[p][1]) for p in parts}
    elif to == "timestamp":
        if timestamp_ms is None:
            raise ValueError("timestamp is required when resetting to a timestamp")
        for t in {t for t, _ in parts}:
            found = admin.offsets_for_time(t, [p for tt, p in parts if tt == t], timestamp_ms)
            targets.update({(t, p): (o if o >= 0 else marks[(t, p)][1]) for p, o in found.items()})
    else:
        raise ValueError(f"Unknown reset target {to!r}: use earliest, latest, offset or timestamp")
    request = ConsumerGroupTopicPartitions(
        group_id, [TopicPartition(t, p, o) for (t, p), o in sorted(targets.items())]
    )
    admin.admin.alter_consumer_group_offsets([request], request_timeout=TIMEOUT)[group_id].result(
        TIMEOUT
    )
    return [{"topic": t, "partition": p, "offset": o} for (t, p), o in sorted(targets.items())]
