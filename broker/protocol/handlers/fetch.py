"""Fetch (key 1): serve whole record batches from the logs, long-polling for new data.

Reads return the stored batches as byte chunks straight from the segment files; they go into
the response as a :class:`RecordChunks` and to the socket with ``writelines``, never decoded
or concatenated. The first batch may start before the requested offset (it is the batch that
*contains* it); clients skip the records before their position, as with Kafka.

Limits (KIP-74): ``partition_max_bytes`` per partition and ``max_bytes`` for the response are
soft for the first batch of the first partition that has data, so a record larger than the
limits is still delivered and a consumer never gets stuck behind it.

Long poll: if fewer than ``min_bytes`` are available the request parks on the
:class:`AppendNotifier` for the partitions it reads and re-reads as soon as any of them has news
for it (a follower: an append; a consumer: the high watermark moved), until ``min_bytes`` are
there or ``max_wait`` passes. An error on any partition answers
immediately, and so does a client hanging up (it gets whatever is there). Reads stop at the
high watermark (or the LSO, below).

Isolation (KIP-98): ``read_uncommitted`` reads up to the high watermark; ``read_committed``
up to the last stable offset (the first offset of the oldest open transaction) and gets, per
partition, the aborted transactions with data in the returned range, from the segments'
transaction indexes; both see the control batches (markers), which consumers skip. The
response's ``last_stable_offset`` is the LSO in both modes, as in Kafka.

Fetch sessions (KIP-227) are answered sessionless: ``session_id`` 0 in every response tells the
client to keep sending full fetch requests, which every client supports.

v0-v3 clients read message format v0 (Fetch v0-v1) or v1 (v2-v3) only: their data is
down-converted (``broker.log.legacy.down_convert``, off the event loop) after the read, keeping
offsets; the size limits apply to the stored bytes, as in Kafka. v4+ responses are untouched.
"""

from __future__ import annotations

import asyncio
import struct
import time
from dataclasses import dataclass
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import BrokerError, OffsetOutOfRangeError, UnknownTopicOrPartitionError
from broker.log.legacy import down_convert
from broker.protocol._buffer import RecordChunks
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol._topics import resolve
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.acl import CLUSTER_NAME, AclOperation, ResourceType
from broker.security.authorizer import allowed

_EMPTY = b""
READ_COMMITTED = 1
_OFFSET_LENGTH = struct.Struct(">qi")
_LAST_DELTA = struct.Struct(">i")
_FIRST_V2_VERSION = 4  # Fetch v4 reads record batches of magic 2; v2-v3 magic 1, v0-v1 magic 0
_NO_LIMIT = 2**31 - 1  # v0-v2 have no response-wide max_bytes


@dataclass
class _Wanted:
    topic: str | None
    topic_id: Any
    partition: int
    offset: int
    max_bytes: int
    leader_epoch: int = -1
    refused: ErrorCode | None = None
    """The authorizer's refusal (the partition is answered with it and never read)."""


@dataclass
class _Result:
    error: ErrorCode = ErrorCode.none
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: Any = _EMPTY
    size: int = 0
    aborted: tuple[Any, ...] = ()


@handles(1, 0, 18)
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
    cluster = ctx.broker.cluster
    replica_id = getattr(request, "replica_id", -1)
    if cluster is not None and replica_id >= 0:
        for w in wanted:  # a follower's fetch offset is its log end offset (Kafka's rule)
            if w.topic is not None:
                cluster.replicas.on_follower_fetch(replica_id, w.topic, w.partition, w.offset)
    max_wait = request.max_wait.total_seconds()
    deadline = time.monotonic() + max_wait
    keys = [(w.topic, w.partition) for w in wanted if w.topic is not None and w.refused is None]
    max_bytes = getattr(request, "max_bytes", _NO_LIMIT)
    committed = getattr(request, "isolation_level", 0) == READ_COMMITTED and replica_id < 0
    while True:
        results, total, errors = _read_all(ctx, wanted, max_bytes, replica_id, committed)
        remaining = deadline - time.monotonic()
        hung_up = ctx.hung_up is not None and ctx.hung_up.done()
        if errors or total >= request.min_bytes or remaining <= 0 or not keys or hung_up:
            break
        await ctx.broker.notifier.wait(keys, remaining, also=ctx.hung_up, replica=replica_id >= 0)
    if ctx.api_version < _FIRST_V2_VERSION:
        await _down_convert(wanted, results, magic=0 if ctx.api_version <= 1 else 1)
    if committed:
        _add_aborted(ctx, cls, wanted, results)
    quotas = ctx.broker.quotas
    if quotas is not None and quotas.quotas and replica_id < 0:  # followers are not clients
        nbytes = sum(r.size for r in results)
        ctx.throttle_ms = quotas.fetch(ctx.principal.name, ctx.client_id or "", nbytes)
    if ctx.broker.stats is not None:
        _count(ctx.broker.stats, wanted, results, replica_id >= 0)
    return _response(ctx, cls, wanted, results)


def _count(stats: Any, wanted: list[_Wanted], results: list[_Result], replica: bool) -> None:
    """Bytes out per topic (metrics on): the stored bytes served, once per answered fetch."""
    for w, r in zip(wanted, results, strict=True):
        if w.topic is not None:
            stats.fetched(w.topic, r.size, replica=replica, failed=r.error != ErrorCode.none)


async def _down_convert(wanted: list[_Wanted], results: list[_Result], magic: int) -> None:
    """Rewrites each result's v2 batches as messages of ``magic`` (0 or 1) for old clients."""
    loop = asyncio.get_running_loop()
    for w, r in zip(wanted, results, strict=True):
        if isinstance(r.records, RecordChunks):
            try:
                r.records = await loop.run_in_executor(
                    None, down_convert, r.records.chunks, w.offset, magic
                )
            except BrokerError as exc:
                r.error, r.records = exc.error_code, _EMPTY


def _wanted(ctx: RequestContext, request: Any) -> list[_Wanted]:
    out = []
    refused_all = None
    checking = ctx.broker.authorizer is not None
    if checking and getattr(request, "replica_id", -1) >= 0:
        # A follower's fetch: the broker's own principal needs CLUSTER_ACTION (Kafka's rule).
        if not allowed(ctx, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME):
            refused_all = ErrorCode.cluster_authorization_failed
        checking = False
    for topic in request.topics:
        name, topic_id = resolve(ctx, topic, name_field="topic")
        refused = refused_all
        if (
            checking
            and name is not None
            and not allowed(ctx, AclOperation.READ, ResourceType.TOPIC, name)
        ):
            refused = ErrorCode.topic_authorization_failed
        for p in topic.partitions:
            out.append(
                _Wanted(name, topic_id, p.partition, p.fetch_offset, p.partition_max_bytes,
                        getattr(p, "current_leader_epoch", -1), refused)
            )  # fmt: skip
    return out


def _read_all(
    ctx: RequestContext, wanted: list[_Wanted], max_bytes: int, replica_id: int = -1,
    committed: bool = False,
) -> tuple[list[_Result], int, bool]:  # fmt: skip
    logs = ctx.broker.logs
    cluster = ctx.broker.cluster
    results: list[_Result] = []
    total = 0
    errors = False
    for w in wanted:
        result = _Result()
        if w.refused is not None:
            result.error = w.refused
            results.append(result)
            continue
        try:
            if w.topic is None:
                result.error = ErrorCode.unknown_topic_id
                raise UnknownTopicOrPartitionError(f"unknown topic id {w.topic_id}")
            if logs is None:
                raise UnknownTopicOrPartitionError("storage unavailable")
            plog = logs.log(w.topic, w.partition)
            hw = plog.high_watermark
            # Cluster mode: only the leader serves; a follower may read to the log end.
            bound = (
                hw
                if cluster is None
                else cluster.replicas.fetch_bound(
                    w.topic, w.partition, replica_id, w.leader_epoch, plog
                )
            )
            result.high_watermark = hw
            result.last_stable_offset = lso = plog.last_stable_offset
            if committed:
                bound = min(bound, lso)
            result.log_start_offset = plog.log_start_offset
            if not plog.log_start_offset <= w.offset <= plog.log_end_offset:
                raise OffsetOutOfRangeError(f"offset {w.offset} of {w.topic}-{w.partition}")
            budget = min(w.max_bytes, max_bytes - total)
            # Between the high watermark and the log end (an fsync pending) there is nothing
            # to serve yet, but the offset is valid: answer empty, not out of range.
            if w.offset < bound and (budget > 0 or total == 0):
                read = plog.read(w.offset, max(budget, 0), upper_bound=bound, min_one=total == 0)
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


def _add_aborted(
    ctx: RequestContext, cls: Any, wanted: list[_Wanted], results: list[_Result]
) -> None:
    """read_committed: the aborted transactions with data in each returned range, which the
    consumer needs to skip their batches (from the segments' transaction indexes)."""
    aborted_cls = nested(cls, "AbortedTransaction")
    for w, r in zip(wanted, results, strict=True):
        if not r.size or w.topic is None:
            continue
        plog = ctx.broker.logs.log(w.topic, w.partition)
        found = plog.aborted_transactions(w.offset, r.last_stable_offset)
        if not found:
            continue
        end = _end_offset(r.records.chunks)
        r.aborted = tuple(
            build(aborted_cls, producer_id=t.producer_id, first_offset=t.first_offset)
            for t in found
            if t.first_offset < end
        )


def _end_offset(chunks: list[Any]) -> int:
    """The offset after the last batch in ``chunks`` (whole batches)."""
    end = -1
    for chunk in chunks:
        pos, n = 0, len(chunk)
        while pos + 27 <= n:
            base, length = _OFFSET_LENGTH.unpack_from(chunk, pos)
            end = base + _LAST_DELTA.unpack_from(chunk, pos + 23)[0] + 1
            pos += length + 12
    return end


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
            last_stable_offset=r.last_stable_offset,
            log_start_offset=r.log_start_offset,
            aborted_transactions=r.aborted,
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
