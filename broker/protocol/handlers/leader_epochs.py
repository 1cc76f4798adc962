"""OffsetForLeaderEpoch (key 23): where a leader epoch ended in this replica's log (KIP-101).

A follower that starts following a new leader asks for the end offset of its own latest epoch
and truncates anything past it (``broker/cluster/fetcher.py``); consumers use it to detect log
truncation (KIP-320). In cluster mode only the partition's leader answers, from its
leader-epoch cache. A single node has one epoch, 0, that never ended: epoch 0 (or any later
one asked for by mistake) ends at the log end offset.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import BrokerError, UnknownTopicOrPartitionError
from broker.log.leader_epoch import UNDEFINED_EPOCH, UNDEFINED_OFFSET
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol.registry import RequestContext, handles, response_class


@handles(23, 2, 4)
async def offset_for_leader_epoch(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    part_cls = nested(cls, "EpochEndOffset")
    topic_cls = nested(cls, "OffsetForLeaderTopicResult")
    topics = []
    for topic in request.topics:
        parts = []
        for p in topic.partitions:
            try:
                epoch, end = _lookup(ctx, topic.topic, p)
                code = ErrorCode.none
            except BrokerError as exc:
                epoch, end, code = UNDEFINED_EPOCH, UNDEFINED_OFFSET, exc.error_code
            parts.append(
                build(part_cls, error_code=code, partition=p.partition, leader_epoch=epoch,
                      end_offset=end)
            )  # fmt: skip
        topics.append(build(topic_cls, topic=topic.topic, partitions=tuple(parts)))
    return build(cls, throttle_time=NO_THROTTLE, topics=tuple(topics))


def _lookup(ctx: RequestContext, topic: str, p: Any) -> tuple[int, int]:
    logs = ctx.broker.logs
    if logs is None:
        raise UnknownTopicOrPartitionError("storage unavailable")
    cluster = ctx.broker.cluster
    if cluster is None:
        plog = logs.log(topic, p.partition)
        if p.leader_epoch < 0:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        return 0, plog.log_end_offset
    part = cluster.replicas.require_leader(topic, p.partition, p.current_leader_epoch)
    plog = part.log
    return plog.leader_epochs.end_offset_for(p.leader_epoch, plog.log_end_offset)  # type: ignore[no-any-return]
