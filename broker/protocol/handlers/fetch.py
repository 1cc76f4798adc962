"""Fetch (key 1): serve whole record batches from the logs, long-polling for new data.

Reads return the stored batches as byte chunks straight from the segment files; they go into
the response as a :class:`RecordChunks` and to the socket with ``writelines``, never decoded
or concatenated. The first batch may start before the requested offset (it is the batch that
*contains* it); clients skip the records before their position, as with Kafka.

Limits (KIP-74): ``partition_max_bytes`` per partition and ``max_bytes`` for the response are
soft for the first batch of the first partition that has data, so a record larger than the
limits is still delivered and a consumer never gets stuck behind it.

Long poll: if fewer than ``min_bytes`` are available the request parks on the
:class:`AppendNotifier` for the partitions it reads and re-reads as soon as any of them gets an
append, until ``min_bytes`` are there or ``max_wait`` passes. An error on any partition answers
immediately, and so does a client hanging up (it gets whatever is there). Reads stop at the
high watermark.

Fetch sessions (KIP-227) are answered sessionless: ``session_id`` 0 in every response tells the
client to keep sending full fetch requests, which every client supports.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import BrokerError, OffsetOutOfRangeError, UnknownTopicOrPartitionError
from broker.protocol._buffer import RecordChunks
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol._topics import resolve
from broker.protocol.registry import RequestContext, handles, response_class

_EMPTY = b""


@dataclass
class _Wanted:
    topic: str | None
    topic_id: Any
    partition: int
    offset: int
    max_bytes: int


@dataclass
class _Result:
    error: ErrorCode = ErrorCode.none
    high_watermark: int = -1
    log_start_offset: int = -1
    records: Any = _EMPTY
    size: int = 0


@handles(1, 4, 18)
async def fetch(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    if getattr(request, "session_id", 0) != 0:
        # We never hand out a session id, so a client naming one is confused: tell it to start
        # over with a full, sessionless fetch.
        return build(
            cls,
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.fetch_session_id_not_found,
            session_id=0,
            responses=(),
        )
    wanted = _wanted(ctx, request)
    max_wait = request.max_wait.total_seconds()
    deadline = time.monotonic() + max_wait
    keys = [(w.topic, w.partition) for w in wanted if w.topic is not None]
    while True:
        results, total, errors = _read_all(ctx, wanted, request.max_bytes)
        remaining = deadline - time.monotonic()
        hung_up = ctx.hung_up is not None and ctx.hung_up.done()
        if errors or total >= request.min_bytes or remaining <= 0 or not keys or hung_up:
            break
        await ctx.broker.notifier.wait(keys, remaining, also=ctx.hung_up)
    return _response(ctx, cls, wanted, results)


def _wanted(ctx: RequestContext, request: Any) -> list[_Wanted]:
    out = []
    for topic in request.topics:
        name, topic_id = resolve(ctx, topic, name_field="topic")
        for p in topic.partitions:
            out.append(_Wanted(name, topic_id, p.partition, p.fetch_offset, p.partition_max_bytes))
    return out


def _read_all(
    ctx: RequestContext, wanted: list[_Wanted], max_bytes: int
) -> tuple[list[_Result], int, bool]:
    logs = ctx.broker.logs
    results: list[_Result] = []
    total = 0
    errors = False
    for w in wanted:
        result = _Result()
        try:
            if w.topic is None:
                result.error = ErrorCode.unknown_topic_id
                raise UnknownTopicOrPartitionError(f"unknown topic id {w.topic_id}")
            if logs is None:
                raise UnknownTopicOrPartitionError("storage unavailable")
            plog = logs.log(w.topic, w.partition)
            hw = plog.high_watermark
            result.high_watermark = hw
            result.log_start_offset = plog.log_start_offset
            if not plog.log_start_offset <= w.offset <= plog.log_end_offset:
                raise OffsetOutOfRangeError(f"offset {w.offset} of {w.topic}-{w.partition}")
            budget = min(w.max_bytes, max_bytes - total)
            # Between the high watermark and the log end (an fsync pending) there is nothing
            # to serve yet, but the offset is valid: answer empty, not out of range.
            if w.offset < hw and (budget > 0 or total == 0):
                read = plog.read(w.offset, max(budget, 0), upper_bound=hw, min_one=total == 0)
                if read.size:
                    result.records = RecordChunks(read.chunks, read.size)
                    result.size = read.size
                    total += read.size
        except BrokerError as exc:
            if result.error == ErrorCode.none:
                result.error = exc.error_code
            errors = True
        results.append(result)
    return results, total, errors


def _response(ctx: RequestContext, cls: Any, wanted: list[_Wanted], results: list[_Result]) -> Any:
    topic_cls = nested(cls, "FetchableTopicResponse")
    part_cls = nested(cls, "PartitionData")
    topics: list[Any] = []
    current: tuple[Any, Any] | None = None
    parts: list[Any] = []
    for w, r in zip(wanted, results, strict=True):
        key = (w.topic, w.topic_id)
        if current is not None and key != current:
            topics.append(_topic(topic_cls, current, parts))
            parts = []
        current = key
        part = build(
            part_cls,
            partition_index=w.partition,
            error_code=r.error,
            high_watermark=r.high_watermark,
            last_stable_offset=r.high_watermark,
            log_start_offset=r.log_start_offset,
            aborted_transactions=(),
            preferred_read_replica=-1,
            records=r.records,
        )
        parts.append(part)
    if current is not None:
        topics.append(_topic(topic_cls, current, parts))
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        session_id=0,
        responses=tuple(topics),
    )


def _topic(topic_cls: Any, key: tuple[Any, Any], parts: list[Any]) -> Any:
    name, topic_id = key
    return build(topic_cls, topic=name, topic_id=topic_id, partitions=tuple(parts))
