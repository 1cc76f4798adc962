"""Reading, altering and resetting a connector's offsets (``/connectors/{name}/offsets``).

Source connectors' offsets are records in the offsets topic (via the ``OffsetStore``); sink
connectors' offsets are their consumer group's (``connect-<name>``) committed offsets, changed
through the admin API. Changes are only allowed while the connector is STOPPED (the herder
checks), so no running task can overwrite them and the sink group has no members; the broker
checks that too (it deletes only empty groups and refuses admin commits into live ones), and a
group that still has members is a 409 with nothing changed.

Resetting *one* sink partition (``"offset": null`` in PATCH) has no admin call in
confluent-kafka (which does not expose OffsetDelete), so it deletes the group and commits the
other partitions back; see :func:`_reset_sink_partitions` for how that stays safe. The Kafka
calls are the shared admin layer's (``kafka_admin.groups``); this module adds Connect's rules
and messages.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from hub.runtime.errors import BadRequestError, ConflictError, HerderError
from hub.runtime.worker_sink_task import group_id
from kafka_admin import GroupBusyError, KafkaAdmin, OffsetCommitRefusedError
from kafka_admin import groups as group_admin
from kafka_admin.groups import Committed

ALTERED = "The offsets for this connector have been altered successfully"
RESET = (
    "The Connect framework-managed offsets for this connector have been reset successfully. "
    "However, if this connector manages offsets externally, they will need to be manually "
    "reset in the system that the connector uses."
)

log = logging.getLogger(__name__)


def source_offsets(store: Any, name: str) -> dict[str, Any]:
    return {"offsets": [{"partition": p, "offset": o} for p, o in store.connector_offsets(name)]}


def alter_source_offsets(store: Any, name: str, offsets: list[dict[str, Any]]) -> str:
    items = []
    for entry in offsets:
        partition, offset = entry.get("partition"), entry.get("offset")
        if not isinstance(partition, dict) or not (offset is None or isinstance(offset, dict)):
            raise BadRequestError("each entry needs a 'partition' object and an 'offset' object")
        items.append((partition, offset))
    store.put(name, items)
    return ALTERED


def reset_source_offsets(store: Any, name: str) -> str:
    store.put(name, [(p, None) for p, _ in store.connector_offsets(name)])
    return RESET


def sink_offsets(admin: KafkaAdmin, name: str) -> dict[str, Any]:
    committed = group_admin.committed_entries(admin, group_id(name))
    return {
        "offsets": [
            {
                "partition": {"kafka_topic": topic, "kafka_partition": partition},
                "offset": {"kafka_offset": offset},
            }
            for (topic, partition), (offset, _, _) in sorted(committed.items())
        ]
    }


def alter_sink_offsets(admin: KafkaAdmin, name: str, offsets: list[dict[str, Any]]) -> str:
    """Sets (a number) or resets (``null``) single partitions of the sink's consumer group.

    Entries apply in order, so a partition named twice gets the last value. Numbers alone are
    one OffsetCommit. Resets go through :func:`_reset_sink_partitions`.
    """
    wanted = _sink_entries(offsets)
    if any(value is None for value in wanted.values()):
        return _reset_sink_partitions(admin, name, wanted)
    _commit(admin, name, {tp: (v, None, None) for tp, v in wanted.items() if v is not None})
    return ALTERED


def _sink_entries(offsets: list[dict[str, Any]]) -> dict[tuple[str, int], int | None]:
    """``(topic, partition) -> offset`` (None: reset) from the request body, validated."""
    wanted: dict[tuple[str, int], int | None] = {}
    for entry in offsets:
        partition, offset = entry.get("partition") or {}, entry.get("offset")
        try:
            topic = str(partition["kafka_topic"])
            number = int(partition["kafka_partition"])
        except (KeyError, TypeError, ValueError):
            raise BadRequestError(
                "sink offsets need partition {'kafka_topic', 'kafka_partition'}"
            ) from None
        if offset is None:
            wanted[(topic, number)] = None
            continue
        try:
            value = int(offset["kafka_offset"])
        except (KeyError, TypeError, ValueError):
            raise BadRequestError("sink offsets need offset {'kafka_offset': n}") from None
        if value < 0:
            raise BadRequestError(f"kafka_offset must be >= 0, got {value}")
        wanted[(topic, number)] = value
    return wanted


def _reset_sink_partitions(
    admin: KafkaAdmin, name: str, wanted: dict[tuple[str, int], int | None]
) -> str:
    """Removes the committed offset of the partitions set to None; sets the others.

    confluent-kafka has no OffsetDelete call, so: read every committed offset of the group,
    delete the group (the broker only deletes an *empty* group, atomically, so a sink task
    still running somewhere makes this a 409 with nothing changed) and commit back every
    partition that is not reset, with its metadata, plus the ones this request sets. Between
    the delete and the commit the group has no offsets; the full set is logged first, and a
    failed commit is an error that lists what must be set again, so nothing is lost silently.
    """
    group = group_id(name)
    committed = _committed(admin, group)
    if not any(value is None and tp in committed for tp, value in wanted.items()):
        # nothing to remove: the reset partitions have no committed offset already
        numbers: Committed = {tp: (v, None, None) for tp, v in wanted.items() if v is not None}
        _commit(admin, name, numbers)
        return ALTERED
    restore: Committed = {tp: c for tp, c in committed.items() if tp not in wanted}
    restore.update({tp: (v, None, None) for tp, v in wanted.items() if v is not None})
    log.info(
        "resetting offsets of %s in group %s: deleting the group, then committing %s "
        "(committed before: %s)",
        _names(tp for tp, v in wanted.items() if v is None),
        group,
        _describe(restore),
        _describe(committed),
    )
    _delete_group(admin, name)
    try:
        _commit(admin, name, restore)
    except Exception as exc:  # any failure here (refusal, timeout) must name what is gone
        log.error(
            "group %s was deleted to reset %s, but committing the other offsets back failed "
            "(%s); these partitions now have no committed offset and must be set again: %s",
            group,
            _names(tp for tp, v in wanted.items() if v is None),
            exc,
            _describe(restore),
        )
        raise HerderError(
            f"The offsets of connector {name} were partly reset: its consumer group {group} "
            f"was deleted, but committing the offsets of the other partitions back failed "
            f"({exc}). Set them again with PATCH /connectors/{name}/offsets before resuming "
            f"the connector: {_describe(restore)}"
        ) from exc
    return ALTERED


def _committed(admin: KafkaAdmin, group: str) -> Committed:
    return group_admin.committed_entries(admin, group)


def _commit(admin: KafkaAdmin, name: str, offsets: Committed) -> None:
    """One admin OffsetCommit into ``connect-<name>``: a live group is a 409 (the broker
    takes such a commit only while the group is empty), other refusals a 500 naming them."""
    try:
        group_admin.commit_offsets(admin, group_id(name), offsets)
    except GroupBusyError:
        raise _group_busy(name) from None
    except OffsetCommitRefusedError as exc:
        raise HerderError(str(exc)) from None


def _names(tps: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{topic}-{partition}" for topic, partition in sorted(tps)) or "none"


def _describe(offsets: Committed) -> str:
    """``topic-partition=offset`` pairs, the form the error message and the log give."""
    return ", ".join(f"{t}-{p}={offsets[(t, p)][0]}" for t, p in sorted(offsets)) or "none"


def reset_sink_offsets(admin: KafkaAdmin, name: str) -> str:
    _delete_group(admin, name)
    return RESET


def _delete_group(admin: KafkaAdmin, name: str) -> None:
    """Deletes ``connect-<name>`` with all its offsets; a missing group is already reset.

    The broker deletes only an empty group, so a consumer still in it (a task that has not
    stopped yet, or another client sharing the group) is a 409 and nothing changes.
    """
    try:
        group_admin.delete_group(admin, group_id(name))
    except GroupBusyError:
        raise _group_busy(name) from None


def _group_busy(name: str) -> ConflictError:
    return ConflictError(
        f"Cannot change the offsets of connector {name}: its consumer group {group_id(name)} "
        "still has active members (a task of the connector that has not stopped yet, or "
        "another consumer using the group). Nothing was changed; retry once the group is empty."
    )
