"""Produce (key 0): append producers' record batches to partition logs.

Batches are stored as sent: ``PartitionLog.append`` validates headers and CRCs, checks the
idempotent producer's sequence numbers, assigns offsets and writes; nothing here decodes
records. Each partition succeeds or fails on its own (a bad batch for one partition does not
fail the others), as Kafka does.

Durability rule: the response (acks=1 or acks=all, the same on a single node) is sent after
the batch was handed to the OS with write(2), so it survives a crash of the broker process
(SIGKILL included); it survives power loss only if the topic's ``flush.messages`` makes us fsync
before answering (``flush.messages=1`` = fsync every append). That is Kafka's own rule, which
relies on replication rather than fsync. The high watermark moves to the log end after the
write, or after the fsync when the flush policy requires one, so consumers never read a record
that a crash could still take away under the configured policy.

acks=0 gets no response at all (the protocol says so; the client does not read one); if
any partition failed, the connection is closed instead, the only signal such a producer gets.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import (
    BrokerError,
    InvalidRecordError,
    InvalidTopicError,
    StorageError,
    UnknownTopicOrPartitionError,
)
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol._topics import resolve
from broker.protocol.handlers.metadata import INTERNAL_TOPICS
from broker.protocol.registry import CloseConnection, RequestContext, handles, response_class

log = logging.getLogger(__name__)

_VALID_ACKS = (-1, 0, 1)
NEVER_FLUSH = 2**63 - 1  # flush.messages default: no fsync on the produce path


@handles(0, 3, 13)
async def produce(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    part_cls = nested(cls, "PartitionProduceResponse")
    topic_cls = nested(cls, "TopicProduceResponse")
    acks = request.acks
    now_ms = int(time.time() * 1000)
    topics = []
    for topic in request.topic_data:
        name, topic_id = resolve(ctx, topic)
        partitions = []
        for pdata in topic.partition_data:
            if acks not in _VALID_ACKS:
                result = _error(part_cls, pdata.index, ErrorCode.invalid_required_acks, None)
            elif name is None and topic_id is not None:
                result = _error(part_cls, pdata.index, ErrorCode.unknown_topic_id, None)
            else:
                result = await _append(ctx, part_cls, name, pdata, now_ms)
            partitions.append(result)
        topics.append(
            build(topic_cls, name=name, topic_id=topic_id, partition_responses=tuple(partitions))
        )
    if acks == 0:
        if any(p.error_code != ErrorCode.none for t in topics for p in t.partition_responses):
            # The producer reads no response; a closed connection makes it refresh metadata
            # and notice (Kafka does the same).
            raise CloseConnection("acks=0 produce failed")
        return None
    return build(cls, responses=tuple(topics), throttle_time=NO_THROTTLE)


async def _append(
    ctx: RequestContext, part_cls: Any, topic: str | None, pdata: Any, now_ms: int
) -> Any:
    partition = pdata.index
    logs = ctx.broker.logs
    try:
        if topic is None or logs is None:
            raise UnknownTopicOrPartitionError(f"unknown topic {topic}")
        if topic in INTERNAL_TOPICS:
            raise InvalidTopicError(f"{topic} is an internal topic")
        if pdata.records is None:
            raise InvalidRecordError("produce request without records")
        plog = logs.log(topic, partition)
        # With a flush.messages policy the high watermark must wait for the fsync, so take
        # over moving it; otherwise the log moves it itself as part of the append.
        flushing = plog.config.flush_messages < NEVER_FLUSH
        plog.hw_follows_leo = not flushing
        info = plog.append(pdata.records, now_ms=now_ms)
        if not info.duplicate:
            if flushing and plog.flush_due:
                await asyncio.get_running_loop().run_in_executor(None, plog.flush)
            plog.set_high_watermark(plog.log_end_offset)
            ctx.broker.notifier.notify(topic, partition)
    except BrokerError as exc:
        if not isinstance(exc, UnknownTopicOrPartitionError):
            log.info(
                "produce rejected",
                extra={
                    "topic": topic,
                    "partition": partition,
                    "error": exc.error_code.name,
                    "reason": str(exc),
                },
            )
        return _error(part_cls, partition, exc.error_code, str(exc))
    except OSError as exc:
        log.error(
            "append failed", extra={"topic": topic, "partition": partition, "error": str(exc)}
        )
        return _error(part_cls, partition, StorageError.error_code, str(exc))
    append_time = (
        datetime.fromtimestamp(info.log_append_time / 1000, tz=UTC)
        if info.log_append_time >= 0
        else None
    )
    return build(
        part_cls,
        index=partition,
        error_code=ErrorCode.none,
        base_offset=info.first_offset,
        log_append_time=append_time,
        log_start_offset=info.log_start_offset,
        record_errors=(),
        error_message=None,
    )


def _error(part_cls: Any, partition: int, code: ErrorCode, message: str | None) -> Any:
    return build(
        part_cls,
        index=partition,
        error_code=code,
        base_offset=-1,
        log_append_time=None,
        log_start_offset=-1,
        record_errors=(),
        error_message=message,
    )
