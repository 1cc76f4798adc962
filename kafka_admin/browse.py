"""Browsing and searching a topic's messages in pages that account for every record they skip.

A browse assigns partitions directly (no group, nothing committed), so looking at a topic never
shows up as a consumer group or moves anyone's offsets.

Every page covers an exact *range* per partition and says so: ``progress`` = how many records
of the whole range (``total``, fixed when the first page was read) lie behind the page's
positions (``searched``), and ``done`` when nothing is left. A page stops at ``limit`` matches,
at its scan budget (``scan`` records read) or at a deadline, and returns a ``cursor`` from which
the next page continues exactly where this one stopped; so a search over a topic larger than
one page's budget reports "searched N of M" and can be continued, and never reports a miss for
records it did not read.

Two directions:

- forward (``earliest``, ``offset``, ``timestamp``, ``positions``): oldest first, from the start
  position up to the end offsets of the first page;
- backward (``latest``): newest first, from the end offsets of the first page down to the log
  start. Each page reads a window below the last page's positions in every partition; of the
  matches it keeps the newest ``limit`` (by timestamp), and a partition's position moves down
  only past what was shown or did not match, so the next page shows the rest.

``next`` is where a live tail continues: the forward positions reached, or for a backward
browse the end offsets of its first page. Records are shaped by ``kafka_admin.records``.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition

from kafka_admin.client import KafkaAdmin
from kafka_admin.filters import RecordFilter
from kafka_admin.records import shape

MAX_LIMIT = 1000
SCAN_DEFAULT = 5000
"""Records one page of a filtered browse reads at most (the "scan window")."""
SCAN_MAX = 50_000
DEADLINE = 8.0
"""Seconds one page may take; a page cut short says how far it got (cursor, progress)."""

Transform = Callable[[list[dict[str, Any]]], None]
"""Rewrites shaped records in place before filtering (the console decodes registry framing)."""


@dataclass
class Cursor:
    """Where a browse stands. ``origin``: first positions (forward: start; backward: end);
    ``bound``: where it ends (forward: end offsets; backward: log start); ``at``: next position
    (forward: next offset to read; backward: exclusive upper end of what is left)."""

    forward: bool
    origin: dict[int, int]
    bound: dict[int, int]
    at: dict[int, int]

    def encode(self) -> str:
        raw = {"f": self.forward, "o": self.origin, "b": self.bound, "a": self.at}
        return base64.urlsafe_b64encode(json.dumps(raw).encode()).decode("ascii")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        try:
            raw = json.loads(base64.urlsafe_b64decode(text.encode("ascii")))
            parts = {k: {int(p): int(o) for p, o in raw[k].items()} for k in ("o", "b", "a")}
            if not (parts["o"].keys() == parts["b"].keys() == parts["a"].keys()):
                raise ValueError("partitions differ")
            return cls(bool(raw["f"]), parts["o"], parts["b"], parts["a"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"Not a browse cursor: {exc}") from None

    def remaining(self, p: int) -> int:
        return (
            max(self.bound[p] - self.at[p], 0)
            if self.forward
            else max(self.at[p] - self.bound[p], 0)
        )

    def progress(self) -> dict[str, Any]:
        total = sum(abs(self.bound[p] - self.origin[p]) for p in self.origin)
        left = sum(self.remaining(p) for p in self.origin)
        return {"searched": total - left, "total": total, "done": left == 0}


def browse(
    admin: KafkaAdmin,
    topic: str,
    *,
    start: str = "latest",
    partition: int | None = None,
    offset: int | None = None,
    timestamp_ms: int | None = None,
    positions: Mapping[int, int] | None = None,
    limit: int = 50,
    filters: RecordFilter | None = None,
    scan: int = SCAN_DEFAULT,
    cursor: str | None = None,
    transform: Transform | None = None,
) -> dict[str, Any]:
    """One page of ``topic`` (one partition or all). ``start``: ``latest`` (newest first),
    ``earliest``, ``offset``, ``timestamp`` (first record at or after ``timestamp_ms``) or
    ``positions`` (continue a tail); ``cursor`` (from the previous page) continues a browse."""
    limit = max(1, min(int(limit), MAX_LIMIT))
    scan = max(limit, min(int(scan), SCAN_MAX))
    flt = filters or RecordFilter()
    meta = admin.metadata().topics.get(topic)
    if meta is None or not meta.partitions:
        raise LookupError(f"Topic {topic} not found")
    if cursor:
        state = Cursor.decode(cursor)
        unknown = set(state.origin) - set(meta.partitions)
        if unknown:
            raise LookupError(f"Topic {topic} has no partition {min(unknown)}")
        ends = {p: o for p, o in admin_ends(admin, topic, sorted(state.origin)).items()}
    else:
        ids = sorted(meta.partitions) if partition is None else [partition]
        if partition is not None and partition not in meta.partitions:
            raise LookupError(f"Topic {topic} has no partition {partition}")
        marks = admin.watermarks((topic, p) for p in ids)
        low = {p: marks[(topic, p)][0] for p in ids}
        ends = {p: marks[(topic, p)][1] for p in ids}
        state = _first_cursor(admin, topic, ids, low, ends, start, offset, timestamp_ms, positions)
    deadline = time.monotonic() + DEADLINE
    if state.forward:
        records, scanned = _forward(admin, topic, state, flt, limit, scan, deadline, transform)
    else:
        budget = scan if flt.active else limit * len(state.origin)
        records, scanned = _backward(admin, topic, state, flt, limit, budget, deadline, transform)
    progress = state.progress()
    tail_from = state.at if state.forward else state.origin
    return {
        "topic": topic,
        "order": "oldest_first" if state.forward else "newest_first",
        "records": records,
        "scanned": scanned,
        "filter": flt.describe(),
        "progress": progress,
        "cursor": None if progress["done"] else state.encode(),
        "next": {str(p): o for p, o in sorted(tail_from.items())},
        "end_offsets": {str(p): e for p, e in sorted(ends.items())},
    }


def admin_ends(admin: KafkaAdmin, topic: str, ids: list[int]) -> dict[int, int]:
    return {p: marks[1] for (_, p), marks in admin.watermarks((topic, p) for p in ids).items()}


def _first_cursor(
    admin: KafkaAdmin,
    topic: str,
    ids: list[int],
    low: dict[int, int],
    high: dict[int, int],
    start: str,
    offset: int | None,
    timestamp_ms: int | None,
    positions: Mapping[int, int] | None,
) -> Cursor:
    def forward(begin: dict[int, int]) -> Cursor:
        return Cursor(True, dict(begin), dict(high), dict(begin))

    if start == "latest":
        return Cursor(False, dict(high), dict(low), dict(high))
    if start == "earliest":
        return forward(low)
    if start == "offset":
        if offset is None:
            raise ValueError("offset is required to browse from an offset")
        return forward({p: min(max(offset, low[p]), high[p]) for p in ids})
    if start == "timestamp":
        if timestamp_ms is None:
            raise ValueError("timestamp is required to browse from a timestamp")
        found = admin.offsets_for_time(topic, ids, timestamp_ms)
        return forward({p: high[p] if found.get(p, -1) < 0 else found[p] for p in ids})
    if start == "positions":
        given = positions or {}
        return forward({p: min(max(given.get(p, high[p]), low[p]), high[p]) for p in ids})
    raise ValueError(f"Unknown start {start!r}: use latest, earliest, offset or timestamp")


def _forward(
    admin: KafkaAdmin,
    topic: str,
    state: Cursor,
    flt: RecordFilter,
    limit: int,
    scan: int,
    deadline: float,
    transform: Transform | None,
) -> tuple[list[dict[str, Any]], int]:
    windows = {p: (state.at[p], state.bound[p]) for p in state.at}
    matched: list[dict[str, Any]] = []
    count = [0]

    def visit(record: dict[str, Any]) -> bool:
        count[0] += 1
        if transform is not None:
            transform([record])
        if flt.matches(record):
            matched.append(record)
        return len(matched) < limit and count[0] < scan

    reached, _ = _scan(admin, topic, windows, visit, deadline)
    state.at.update(reached)
    matched.sort(key=lambda r: (r["timestamp"] or 0, r["partition"], r["offset"]))
    return matched, count[0]


def _backward(
    admin: KafkaAdmin,
    topic: str,
    state: Cursor,
    flt: RecordFilter,
    limit: int,
    budget: int,
    deadline: float,
    transform: Transform | None,
) -> tuple[list[dict[str, Any]], int]:
    windows = _windows(state, budget)
    found: list[dict[str, Any]] = []
    count = [0]

    def visit(record: dict[str, Any]) -> bool:
        count[0] += 1
        if transform is not None:
            transform([record])
        if flt.matches(record):
            found.append(record)
        return True

    reached, finished = _scan(admin, topic, windows, visit, deadline)
    # A window read only partly (deadline) lies between unread records: show none of it.
    found = [r for r in found if r["partition"] in finished]
    found.sort(key=lambda r: (-(r["timestamp"] or 0), r["partition"], -r["offset"]))
    kept, dropped = found[:limit], found[limit:]
    dropped_top: dict[int, int] = {}
    for r in dropped:
        dropped_top[r["partition"]] = max(dropped_top.get(r["partition"], -1), r["offset"])
    # Shown records of a partition must all lie above its new position (no gap, no repeat).
    shown = [r for r in kept if r["offset"] > dropped_top.get(r["partition"], -1)]
    for p, (lo, _) in windows.items():
        if p not in finished or reached[p] == lo:
            continue
        state.at[p] = dropped_top[p] + 1 if p in dropped_top else lo
    return shown, count[0]


def _windows(state: Cursor, budget: int) -> dict[int, tuple[int, int]]:
    """Per partition the next window below ``state.at``, sharing ``budget`` records."""
    left = {p: state.remaining(p) for p in state.at if state.remaining(p) > 0}
    share: dict[int, int] = {}
    pool = budget
    for p in sorted(left, key=left.__getitem__):  # small partitions first give back the rest
        share[p] = min(left[p], max(1, pool // (len(left) - len(share))))
        pool -= share[p]
    return {p: (state.at[p] - n, state.at[p]) for p, n in share.items()}


def _scan(
    admin: KafkaAdmin,
    topic: str,
    windows: dict[int, tuple[int, int]],
    visit: Callable[[dict[str, Any]], bool],
    deadline: float,
) -> tuple[dict[int, int], set[int]]:
    """Reads each ``[lo, hi)`` window in offset order, handing records to ``visit`` until it
    returns False. Returns the position reached per partition and the partitions read fully.
    A log start past ``lo`` (retention, DeleteRecords) skips to the first record there."""
    reached = {p: lo for p, (lo, _) in windows.items()}
    finished = {p for p, (lo, hi) in windows.items() if lo >= hi}
    pending = set(windows) - finished
    if not pending:
        return reached, finished
    consumer = Consumer({
        **admin.client_config,
        "group.id": f"sluice-console-{uuid.uuid4()}",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
        "queued.max.messages.kbytes": 16384,
    })  # fmt: skip

    def done(p: int) -> None:
        reached[p] = windows[p][1]
        finished.add(p)
        pending.discard(p)
        consumer.pause([TopicPartition(topic, p)])

    try:
        consumer.assign([TopicPartition(topic, p, windows[p][0]) for p in sorted(pending)])
        while pending and time.monotonic() < deadline:
            for msg in consumer.consume(500, timeout=0.1):  # a short wait: pages end sooner
                p = msg.partition() or 0
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        if p in pending:
                            done(p)
                        continue
                    raise RuntimeError(err.str())
                at = msg.offset() or 0
                if p not in pending:
                    continue
                if at >= windows[p][1]:
                    done(p)
                    continue
                reached[p] = at + 1
                if reached[p] >= windows[p][1]:
                    done(p)
                if not visit(shape(msg)):
                    return reached, finished
    finally:
        consumer.close()
    return reached, finished
