"""ListOffsets v0: up to ``max_num_offsets`` offsets per partition, from segment boundaries.

v0 predates record timestamps (KIP-79 gave v1 its "first offset at or after time T"); it
answers from the segment files, as Kafka 3.x still does for it:

- the candidates are each segment's base offset (the log start offset for the first), each
  stamped with the segment file's modification time, then the log end offset stamped "now"
  if the active segment holds data;
- LATEST (-1) starts from the newest candidate, EARLIEST (-2) from the oldest, a time T from
  the newest candidate not modified after T;
- the answer is up to ``max_num_offsets`` candidates from there towards older ones, newest
  first;
- a consumer (replica id -1) never sees past the high watermark: offsets above it are replaced
  by the high watermark itself.

Lag monitors send ``LATEST`` with ``max_num_offsets=1`` on every refresh and read the first
offset, so that case must be cheap: it stats no file.
"""

from __future__ import annotations

import os
import time
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import BrokerError, UnknownTopicOrPartitionError
from broker.protocol._entities import build, nested
from broker.protocol.registry import RequestContext

LATEST = -1
EARLIEST = -2
CONSUMER = -1  # the replica id consumers send


def list_offsets_v0(ctx: RequestContext, cls: Any, request: Any) -> Any:
    part_cls = nested(cls, "ListOffsetsPartitionResponse")
    topic_cls = nested(cls, "ListOffsetsTopicResponse")
    topics = []
    for topic in request.topics:
        parts = []
        for p in topic.partitions:
            try:
                offsets = _offsets(ctx, topic.name, p, request.replica_id == CONSUMER)
                error = ErrorCode.none
            except BrokerError as exc:
                offsets, error = (), exc.error_code
            parts.append(
                build(
                    part_cls,
                    partition_index=p.partition_index,
                    error_code=error,
                    old_style_offsets=offsets,
                )
            )
        topics.append(build(topic_cls, name=topic.name, partitions=tuple(parts)))
    return build(cls, topics=tuple(topics))


def _offsets(ctx: RequestContext, topic: str, p: Any, capped: bool) -> tuple[int, ...]:
    logs = ctx.broker.logs
    if logs is None:
        raise UnknownTopicOrPartitionError("storage unavailable")
    plog = logs.log(topic, p.partition_index)
    wanted = max(p.max_num_offsets, 0)
    log_start, log_end = plog.log_start_offset, plog.log_end_offset
    segments = plog.segments()
    if p.timestamp == LATEST and wanted == 1:
        found = [log_end]
    elif p.timestamp == EARLIEST:
        found = [log_start][:wanted]
    else:
        candidates = [(max(s.base_offset, log_start), _modified_ms(s.path)) for s in segments]
        if segments and segments[-1].size > 0:
            candidates.append((log_end, int(time.time() * 1000)))
        if p.timestamp == LATEST:
            start = len(candidates) - 1
        else:
            start = len(candidates) - 1
            while start >= 0 and candidates[start][1] > p.timestamp:
                start -= 1
        found = [offset for offset, _ in reversed(candidates[: start + 1])][:wanted]
    if capped:
        hw = plog.high_watermark
        if any(offset > hw for offset in found):
            found = [hw] + [offset for offset in found if offset <= hw]
    return tuple(found)


def _modified_ms(path: os.PathLike[str]) -> int:
    try:
        return os.stat(path).st_mtime_ns // 1_000_000
    except OSError:  # deleted by retention since the snapshot: never matches a time
        return 2**63 - 1
