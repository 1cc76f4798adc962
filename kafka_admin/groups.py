"""Consumer groups: members, assignments, committed offsets, lag, resets, deletes.

Shared by ``sluice groups``, the web console and the hub runtime (a sink connector's offsets
are its group's).

Lag is the partition's end offset minus the group's committed offset, both read now. A group
covers every partition of each topic it has committed to or is assigned: a partition without a
commit (no consumer reached it yet, or it was added later) counts as lagging by everything it
holds (end - start offset) and says so (``lag_estimated``), because that is what the group
would read when it gets there; leaving it out hides exactly the unread messages an operator
is looking for. Offsets can only be reset
while a group has no members (state Empty or Dead), as ``kafka-consumer-groups --reset-offsets``
insists: a live member would overwrite the reset with its next commit, and a silently lost reset
is worse than a clear refusal.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition

from kafka_admin.client import KafkaAdmin, error_code
from kafka_admin.errors import GroupBusyError, NotFoundError, OffsetCommitRefusedError

INACTIVE_STATES = {"EMPTY", "DEAD", "UNKNOWN"}
RESET_TARGETS = ("earliest", "latest", "offset", "timestamp")

Committed = dict[tuple[str, int], tuple[int, str | None, int | None]]
"""``(topic, partition) -> (offset, metadata, leader epoch)`` of a consumer group."""


def _state(value: Any) -> str:
    return str(getattr(value, "name", value) or "UNKNOWN").upper()


def list_groups(admin: KafkaAdmin) -> list[dict[str, Any]]:
    listing = admin.admin.list_consumer_groups(request_timeout=admin.timeout).result(admin.timeout)
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
            "uncommitted_partitions": sum(1 for p in d["offsets"] if p["lag_estimated"]),
        }
        for g, d in details.items()
    ]


def describe(admin: KafkaAdmin, group_id: str) -> dict[str, Any]:
    """Members with their assignments, and per partition: committed offset, end offset, lag."""
    desc = admin.admin.describe_consumer_groups([group_id], request_timeout=admin.timeout)[
        group_id
    ].result(admin.timeout)
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
    assigned = {
        (a["topic"], a["partition"]): m["member_id"] for m in members for a in m["assignment"]
    }
    parts = set(committed) | set(assigned)
    md = admin.metadata()
    for topic in {t for t, _ in parts}:  # the partitions nobody committed or holds, too
        meta = md.topics.get(topic)
        if meta is not None and meta.error is None:
            parts.update((topic, p) for p in meta.partitions)
    marks = admin.watermarks(sorted(parts))
    offsets = []
    for topic, partition in sorted(parts):
        offset = committed.get((topic, partition))
        start, end = marks[(topic, partition)]
        offsets.append({
            "topic": topic,
            "partition": partition,
            "committed": offset,
            "start_offset": start,
            "end_offset": end,
            "lag": max(end - start, 0) if offset is None else max(end - offset, 0),
            "lag_estimated": offset is None,
            "member": assigned.get((topic, partition)),
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
    result = admin.admin.list_consumer_group_offsets(request, request_timeout=admin.timeout)
    answer = result[group_id].result(admin.timeout)
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
    dry_run: bool = False,
) -> list[dict[str, Any]]:
    """Commits new offsets for the group's partitions (of ``topic`` only, when given), those
    without a commit included.

    ``to`` is ``earliest``, ``latest``, ``offset`` (clamped into each partition's range) or
    ``timestamp`` (the first offset at or after it; the end when there is none). Returns per
    partition the offset written, the committed offset before and the lag after; with
    ``dry_run`` only that plan, nothing written. Raises GroupBusyError while the group has
    members (a dry run too: its plan could not be applied), ValueError on bad input.
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
    targets = reset_targets(admin, parts, to, offset=offset, timestamp_ms=timestamp_ms)
    before = {(p["topic"], p["partition"]): p for p in current["offsets"]}
    marks = admin.watermarks(sorted(targets)) if any(tp not in before for tp in targets) else {}
    plan = []
    for (t, p), o in sorted(targets.items()):
        row = before.get((t, p))
        end = row["end_offset"] if row else marks[(t, p)][1]
        plan.append({
            "topic": t, "partition": p, "offset": o,
            "committed": row["committed"] if row else None,
            "end_offset": end, "lag_after": max(end - o, 0),
        })  # fmt: skip
    if dry_run:
        return plan
    request = ConsumerGroupTopicPartitions(
        group_id, [TopicPartition(t, p, o) for (t, p), o in sorted(targets.items())]
    )
    admin.admin.alter_consumer_group_offsets([request], request_timeout=admin.timeout)[
        group_id
    ].result(admin.timeout)
    return plan


def reset_targets(
    admin: KafkaAdmin,
    parts: list[tuple[str, int]],
    to: str,
    *,
    offset: int | None = None,
    timestamp_ms: int | None = None,
    clamp: bool = True,
) -> dict[tuple[str, int], int]:
    """The offset each partition would be reset to (``to`` as in ``reset_offsets``).

    ``offset`` is clamped into each partition's range unless ``clamp`` is false (the CLI's
    ``--to N`` commits N as given, like ``kafka-consumer-groups``). A timestamp with no record
    at or after it gives the partition's end."""
    if to not in RESET_TARGETS:
        raise ValueError(f"Unknown reset target {to!r}: use earliest, latest, offset or timestamp")
    if to == "offset":
        if offset is None:
            raise ValueError("offset is required when resetting to an offset")
        if not clamp:
            return dict.fromkeys(parts, offset)
    if to == "timestamp" and timestamp_ms is None:
        raise ValueError("timestamp is required when resetting to a timestamp")
    marks = admin.watermarks(parts)
    if to == "earliest":
        return {p: marks[p][0] for p in parts}
    if to == "latest":
        return {p: marks[p][1] for p in parts}
    if to == "offset":
        assert offset is not None
        return {p: min(max(offset, marks[p][0]), marks[p][1]) for p in parts}
    assert timestamp_ms is not None
    targets: dict[tuple[str, int], int] = {}
    for t in sorted({t for t, _ in parts}):
        found = admin.offsets_for_time(t, [p for tt, p in parts if tt == t], timestamp_ms)
        targets.update({(t, p): (o if o >= 0 else marks[(t, p)][1]) for p, o in found.items()})
    return targets


def topic_partitions(admin: KafkaAdmin, topic: str) -> list[tuple[str, int]]:
    """Every partition of ``topic``; ``NotFoundError`` if it does not exist."""
    meta = admin.metadata(topic).topics.get(topic)
    if meta is None or meta.error is not None:
        raise NotFoundError(f"topic {topic} not found")
    return [(topic, p) for p in sorted(meta.partitions)]


def committed_entries(admin: KafkaAdmin, group_id: str) -> Committed:
    """Every committed offset of the group with its metadata and leader epoch ({} if the group
    does not exist)."""
    request = ConsumerGroupTopicPartitions(group_id)
    future = admin.admin.list_consumer_group_offsets([request])[group_id]
    try:
        result = future.result(timeout=admin.timeout)
    except KafkaException as exc:
        if error_code(exc) == KafkaError.GROUP_ID_NOT_FOUND:
            return {}
        raise
    return {
        (tp.topic, tp.partition): (tp.offset, tp.metadata, tp.leader_epoch)
        for tp in result.topic_partitions or []
        if tp.offset >= 0
    }


def commit_offsets(admin: KafkaAdmin, group_id: str, offsets: Committed) -> None:
    """One OffsetCommit as an admin (no member, generation -1) into ``group_id``.

    The broker takes such a commit only while the group is empty; a live group answers
    UNKNOWN_MEMBER_ID for every partition: ``GroupBusyError``. Other refusals raise
    ``OffsetCommitRefusedError`` naming the partitions."""
    if not offsets:
        return
    tps = [
        # the client takes no None here: "" is what the broker stores for no metadata, and
        # -1 means no leader epoch
        TopicPartition(topic, partition, offset, metadata or "", -1 if epoch is None else epoch)
        for (topic, partition), (offset, metadata, epoch) in sorted(offsets.items())
    ]
    request = ConsumerGroupTopicPartitions(group_id, tps)
    result = admin.admin.alter_consumer_group_offsets([request])[group_id].result(
        timeout=admin.timeout
    )
    failed = [tp for tp in result.topic_partitions or [] if tp.error is not None]
    if failed and all(tp.error.code() == KafkaError.UNKNOWN_MEMBER_ID for tp in failed):
        raise GroupBusyError(f"group {group_id} has active members")
    if failed:
        raise OffsetCommitRefusedError(
            "the broker refused "
            + ", ".join(f"{tp.topic}-{tp.partition} ({tp.error.str()})" for tp in failed),
            [(tp.topic, tp.partition, tp.error.str()) for tp in failed],
        )


def delete_group(admin: KafkaAdmin, group_id: str) -> bool:
    """Deletes the group and its offsets; False if it did not exist. The broker deletes only
    an empty group: ``GroupBusyError`` otherwise, and nothing changes."""
    future = admin.admin.delete_consumer_groups([group_id], request_timeout=admin.timeout)[group_id]
    try:
        future.result(timeout=admin.timeout)
    except KafkaException as exc:
        if error_code(exc) == KafkaError.NON_EMPTY_GROUP:
            raise GroupBusyError(f"group {group_id} has active members") from None
        if error_code(exc) == KafkaError.GROUP_ID_NOT_FOUND:
            return False
        raise
    return True


def topic_consumers(admin: KafkaAdmin, topic: str) -> list[dict[str, Any]]:
    """The groups that committed to or are assigned ``topic``, with their lag on it."""
    listing = admin.admin.list_consumer_groups(request_timeout=admin.timeout).result(admin.timeout)
    out = []
    for group_id in sorted(g.group_id for g in listing.valid):
        detail = describe(admin, group_id)
        rows = [p for p in detail["offsets"] if p["topic"] == topic]
        if not rows:
            continue
        out.append({
            "group_id": group_id, "state": detail["state"], "members": len(detail["members"]),
            "lag": sum(p["lag"] for p in rows),
            "uncommitted_partitions": sum(1 for p in rows if p["lag_estimated"]),
            "partitions": rows,
        })  # fmt: skip
    return out
