"""ListOffsets (key 2): earliest, latest, max-timestamp and by-timestamp offsets.

Special timestamps: -2 earliest (log start), -1 latest, -3 the record with the largest
timestamp (v7+), -4/-5 earliest local/tiered (v8+/v11+; one tier here, so = earliest).

Isolation (v2+): the end a reader may see is the high watermark for ``read_uncommitted`` and
the last stable offset for ``read_committed`` (KIP-98): "latest" answers that end, and
nothing at or past it is ever returned, by timestamp either.

By timestamp: the first *record* whose timestamp is >= t, as Kafka answers (the log finds the
batch with its time index and decodes that one batch).

v0 (several offsets per partition, from segment boundaries) has its own module,
``_list_offsets_v0``.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import BrokerError, UnknownTopicOrPartitionError
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol.handlers._list_offsets_v0 import list_offsets_v0
from broker.protocol.registry import RequestContext, handles, response_class

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
EARLIEST_PENDING_UPLOAD = -5
LATEST_TIERED = -6


@handles(2, 0, 11)
async def list_offsets(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    if ctx.api_version == 0:
        return list_offsets_v0(ctx, cls, request)
    part_cls = nested(cls, "ListOffsetsPartitionResponse")
    topic_cls = nested(cls, "ListOffsetsTopicResponse")
    committed = getattr(request, "isolation_level", 0) == 1
    topics = []
    for topic in request.topics:
        parts = []
        for p in topic.partitions:
            try:
                offset, timestamp = _lookup(
                    ctx, topic.name, p.partition_index, p.timestamp, committed
                )
                error = ErrorCode.none
            except BrokerError as exc:
                offset, timestamp, error = -1, -1, exc.error_code
            parts.append(
                build(
                    part_cls,
                    partition_index=p.partition_index,
                    error_code=error,
                    timestamp=timestamp,
                    offset=offset,
                    leader_epoch=_epoch_of(ctx, topic.name, p.partition_index, offset),
                )
            )
        topics.append(build(topic_cls, name=topic.name, partitions=tuple(parts)))
    return build(cls, throttle_time=NO_THROTTLE, topics=tuple(topics))


def _epoch_of(ctx: RequestContext, topic: str, partition: int, offset: int) -> int:
    """The leader epoch of the returned offset (KIP-320 consumers validate positions with
    it): always 0 on a single node; in cluster mode the epoch that wrote that offset."""
    if offset < 0:
        return -1
    cluster = ctx.broker.cluster
    if cluster is None:
        return 0
    p = cluster.replicas.leader_partition(topic, partition)
    return p.log.leader_epochs.epoch_for_offset(offset) if p is not None else -1


def _lookup(
    ctx: RequestContext, topic: str, partition: int, timestamp: int, committed: bool = False
) -> tuple[int, int]:
    """(offset, timestamp) for one partition; (-1, -1) when no record qualifies."""
    logs = ctx.broker.logs
    if logs is None:
        raise UnknownTopicOrPartitionError("storage unavailable")
    plog = logs.log(topic, partition)
    if ctx.broker.cluster is not None:
        ctx.broker.cluster.replicas.require_leader(topic, partition)  # NOT_LEADER_OR_FOLLOWER
    hw = plog.last_stable_offset if committed else plog.high_watermark
    if timestamp in (EARLIEST, EARLIEST_LOCAL, EARLIEST_PENDING_UPLOAD):
        return plog.log_start_offset, -1
    if timestamp in (LATEST, LATEST_TIERED):
        return hw, -1
    if timestamp == MAX_TIMESTAMP:
        if hw <= plog.log_start_offset:
            return -1, -1
        ts, offset = plog.last_batch_max_timestamp()
        return (offset, ts) if offset < hw else (-1, -1)
    if timestamp < 0:
        return -1, -1
    found = plog.offset_for_timestamp(timestamp)
    if found is None or found[0] >= hw:
        return -1, -1
    offset, ts = found
    return int(offset), int(ts)
