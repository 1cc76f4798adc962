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

v0-v2 carry message sets of magic 0/1; they are stored as one v2 batch each
(``broker.log.legacy.up_convert``, off the event loop). v3+ batches are never decoded.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import (
    BrokerError,
    InvalidRecordError,
    InvalidTopicError,
    NotLeaderOrFollowerError,
    StorageError,
    UnknownTopicOrPartitionError,
)
from broker.log.legacy import up_convert
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol._topics import resolve
from broker.protocol.handlers.metadata import INTERNAL_TOPICS
from broker.protocol.registry import (
    CloseConnection,
    Deferred,
    RequestContext,
    handles,
    response_class,
)
from broker.security.acl import AclOperation, ResourceType
from broker.security.authorizer import allowed

log = logging.getLogger(__name__)

_VALID_ACKS = (-1, 0, 1)
_FIRST_V2_VERSION = 3  # Produce v3 introduced record batches of magic 2
NEVER_FLUSH = 2**63 - 1  # flush.messages default: no fsync on the produce path


@handles(0, 0, 13)
async def produce(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    part_cls = nested(cls, "PartitionProduceResponse")
    topic_cls = nested(cls, "TopicProduceResponse")
    acks = request.acks
    now_ms = int(time.time() * 1000)
    entries: list[tuple[Any, Any, list[Any]]] = []
    pending = False
    txn_refused = ctx.broker.authorizer is not None and not _transactional_id_allowed(ctx, request)
    for topic in request.topic_data:
        name, topic_id = resolve(ctx, topic)
        refused = _refused(ctx, name, txn_refused)
        partitions = []
        for pdata in topic.partition_data:
            if acks not in _VALID_ACKS:
                result = _error(part_cls, pdata.index, ErrorCode.invalid_required_acks, None)
            elif refused is not None:
                result = _error(part_cls, pdata.index, refused, None)
            elif name is None and topic_id is not None:
                result = _error(part_cls, pdata.index, ErrorCode.unknown_topic_id, None)
            else:
                result = await _append(ctx, part_cls, name, pdata, now_ms, request)
                pending = pending or isinstance(result, _Replicating)
            partitions.append(result)
        entries.append((name, topic_id, partitions))
    quotas = ctx.broker.quotas
    if quotas is not None and quotas.quotas:
        nbytes = sum(len(p.records or b"") for t in request.topic_data for p in t.partition_data)
        ctx.throttle_ms = quotas.produce(ctx.principal.name, ctx.client_id or "", nbytes)
    if pending:  # cluster mode, acks=all: answer once the ISR has every batch
        return Deferred(_replicated_response(cls, topic_cls, part_cls, entries, request))
    topics = [
        build(topic_cls, name=name, topic_id=topic_id, partition_responses=tuple(partitions))
        for name, topic_id, partitions in entries
    ]
    if acks == 0:
        if any(p.error_code != ErrorCode.none for t in topics for p in t.partition_responses):
            # The producer reads no response; a closed connection makes it refresh metadata
            # and notice (Kafka does the same).
            raise CloseConnection("acks=0 produce failed")
        return None
    return build(cls, responses=tuple(topics), throttle_time=NO_THROTTLE)


def _transactional_id_allowed(ctx: RequestContext, request: Any) -> bool:
    txn_id = getattr(request, "transactional_id", None)
    return txn_id is None or allowed(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn_id)


def _refused(ctx: RequestContext, topic: str | None, txn_refused: bool) -> ErrorCode | None:
    """Kafka's order: the transactional id's WRITE, then WRITE on the topic (before even
    looking the topic up, so a refused client cannot probe which topics exist)."""
    if ctx.broker.authorizer is None:
        return None
    if txn_refused:
        return ErrorCode.transactional_id_authorization_failed
    if topic is not None and not allowed(ctx, AclOperation.WRITE, ResourceType.TOPIC, topic):
        return ErrorCode.topic_authorization_failed
    return None


async def _append(
    ctx: RequestContext, part_cls: Any, topic: str | None, pdata: Any, now_ms: int, request: Any
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
        records = pdata.records
        if ctx.api_version < _FIRST_V2_VERSION:
            loop = asyncio.get_running_loop()
            records = await loop.run_in_executor(None, up_convert, records)
        if ctx.broker.cluster is not None:
            return await _append_replicated(ctx, part_cls, topic, partition, records, now_ms,
                                            request)  # fmt: skip
        # With a flush.messages policy the high watermark must wait for the fsync, so take
        # over moving it; otherwise the log moves it itself as part of the append.
        flushing = plog.config.flush_messages < NEVER_FLUSH
        plog.hw_follows_leo = not flushing
        info = plog.append(records, now_ms=now_ms)
        _count(ctx, topic, info, records)
        if not info.duplicate:
            if flushing and plog.flush_due:
                await asyncio.get_running_loop().run_in_executor(None, plog.flush)
            plog.set_high_watermark(plog.log_end_offset)
            ctx.broker.notifier.notify(topic, partition)
    except BrokerError as exc:
        if ctx.broker.stats is not None and topic is not None:
            ctx.broker.stats.produce_failed(topic)
        if not isinstance(exc, UnknownTopicOrPartitionError | NotLeaderOrFollowerError):
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
        if ctx.broker.stats is not None and topic is not None:
            ctx.broker.stats.produce_failed(topic)
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


async def _append_replicated(
    ctx: RequestContext, part_cls: Any, topic: str, partition: int, records: bytes, now_ms: int,
    request: Any,
) -> Any:  # fmt: skip
    """Cluster mode: only the leader appends (at its leader epoch); acks=all waits until the
    ISR has the batch (the high watermark passes it) or the request timeout ends. Errors
    raised here are BrokerErrors, turned into partition errors by the caller."""
    replicas = ctx.broker.cluster.replicas
    info, p = replicas.append_as_leader(topic, partition, records, request.acks, now_ms)
    _count(ctx, topic, info, records)
    plog = p.log
    if not info.duplicate:
        if plog.config.flush_messages < NEVER_FLUSH and plog.flush_due:
            await asyncio.get_running_loop().run_in_executor(None, plog.flush)
        # Wakes the followers' fetches only; consumers are woken when the HW moves (by the
        # append itself when the leader is the whole ISR, else by the followers' next fetches).
        ctx.broker.notifier.notify_log_end(topic, partition)
    if request.acks == -1:
        return _Replicating(p, partition, info)
    return _ok(part_cls, partition, info)


def _count(ctx: RequestContext, topic: str, info: Any, records: bytes) -> None:
    """Messages and bytes in (metrics on): one batch, counted by the offsets it was given;
    a duplicate (an idempotent producer's retry) was not appended again and counts nothing."""
    stats = ctx.broker.stats
    if stats is not None and not info.duplicate:
        stats.produced(topic, info.last_offset - info.first_offset + 1, len(records))


@dataclass
class _Replicating:
    """An acks=all append waiting for the ISR (cluster mode)."""

    partition_state: Any
    partition: int
    info: Any


async def _replicated_response(
    cls: Any, topic_cls: Any, part_cls: Any, entries: list[tuple[Any, Any, list[Any]]],
    request: Any,
) -> Any:  # fmt: skip
    """Waits (together) for every acks=all append of the request, then builds the response;
    a partition whose wait fails gets its error (timeout, leadership moved, ISR too small)."""
    from broker.cluster.replica_manager import wait_replicated

    timeout_s = max(request.timeout.total_seconds(), 0.0)
    waiting = [r for _, _, parts in entries for r in parts if isinstance(r, _Replicating)]
    if len(waiting) == 1:  # the common case: no gather task per request
        r = waiting[0]
        codes = [await wait_replicated(r.partition_state, r.info.last_offset + 1, timeout_s)]
    else:
        codes = await asyncio.gather(*(
            wait_replicated(r.partition_state, r.info.last_offset + 1, timeout_s)
            for r in waiting
        ))  # fmt: skip
    done = {id(r): code for r, code in zip(waiting, codes, strict=True)}

    def final(r: Any) -> Any:
        if not isinstance(r, _Replicating):
            return r
        code = done[id(r)]
        if code != ErrorCode.none:
            return _error(part_cls, r.partition, code, None)
        return _ok(part_cls, r.partition, r.info)

    topics = tuple(
        build(topic_cls, name=name, topic_id=topic_id,
              partition_responses=tuple(final(r) for r in parts))
        for name, topic_id, parts in entries
    )  # fmt: skip
    return build(cls, responses=topics, throttle_time=NO_THROTTLE)


def _ok(part_cls: Any, partition: int, info: Any) -> Any:
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
