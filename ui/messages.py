"""The console's message browser and test producer, with a plain Kafka consumer and producer.

A browse assigns partitions explicitly (no group, nothing committed), so looking at a topic
never shows up as a consumer group or moves anyone's offsets. It reads from the chosen start
until each partition reaches the end offset it had when the browse began, the limit is met,
or a deadline passes: a topic being written to cannot keep a request open forever. It returns
``next`` positions so the page's live tail continues exactly where the last page stopped.

Keys, values and headers are returned as text when they are UTF-8 and as base64 otherwise;
the page pretty-prints values that parse as JSON.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from ui.kafka_admin import TIMEOUT, KafkaAdmin

MAX_LIMIT = 1000
SCAN_FACTOR = 20
"""A filtered browse reads at most ``limit * SCAN_FACTOR`` records looking for matches."""
BROWSE_DEADLINE = 5.0


def _text(data: bytes | None) -> tuple[str | None, str]:
    if data is None:
        return None, "null"
    try:
        return data.decode("utf-8"), "text"
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), "base64"


def _record(msg: Any) -> dict[str, Any]:
    key, key_enc = _text(msg.key())
    value, value_enc = _text(msg.value())
    ts_type, ts = msg.timestamp()
    headers = [[k, _text(v)[0]] for k, v in (msg.headers() or [])]
    return {
        "partition": msg.partition(),
        "offset": msg.offset(),
        "timestamp": ts if ts_type else None,
        "key": key,
        "key_encoding": key_enc,
        "value": value,
        "value_encoding": value_enc,
        "headers": headers,
        "size": len(msg.value() or b"") + len(msg.key() or b""),
    }


def _matches(record: dict[str, Any], needle: str) -> bool:
    hay = [record["key"] or "", record["value"] or ""] + [f"{k}={v}" for k, v in record["headers"]]
    return any(needle in part.lower() for part in hay)


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
    text: str = "",
) -> dict[str, Any]:
    """Up to ``limit`` records of ``topic`` (one partition or all), oldest first.

    ``start``: ``earliest``; ``latest`` (the last ``limit`` records of each partition);
    ``offset`` (from ``offset``); ``timestamp`` (from the first record at or after
    ``timestamp_ms``); ``positions`` (continue from ``positions``, per partition: the tail).
    """
    limit = max(1, min(int(limit), MAX_LIMIT))
    meta = admin.metadata().topics.get(topic)
    if meta is None or not meta.partitions:
        raise LookupError(f"Topic {topic} not found")
    ids = sorted(meta.partitions) if partition is None else [partition]
    if partition is not None and partition not in meta.partitions:
        raise LookupError(f"Topic {topic} has no partition {partition}")
    marks = admin.watermarks((topic, p) for p in ids)
    begin = _start_offsets(admin, topic, ids, marks, start, offset, timestamp_ms, positions, limit)
    ends = {p: marks[(topic, p)][1] for p in ids}
    pending = {p for p in ids if begin[p] < ends[p]}
    records: list[dict[str, Any]] = []
    scanned = 0
    nxt = dict(begin)
    needle = text.strip().lower()
    if pending:
        consumer = Consumer({
            **admin.client_config,
            "group.id": f"sluice-console-{uuid.uuid4()}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
        })  # fmt: skip
        try:
            consumer.assign([TopicPartition(topic, p, begin[p]) for p in sorted(pending)])
            deadline = time.monotonic() + BROWSE_DEADLINE
            # "latest" reads up to ``limit`` from every partition, then keeps the newest overall.
            newest = start == "latest"
            while pending and time.monotonic() < deadline and (newest or len(records) < limit):
                if needle and scanned >= limit * SCAN_FACTOR:
                    break
                for msg in consumer.consume(500, timeout=0.5):
                    err = msg.error()
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            pending.discard(msg.partition())
                            continue
                        raise RuntimeError(err.str())
                    p, at = msg.partition() or 0, msg.offset() or 0  # set on every record
                    if p not in pending or at >= ends[p]:
                        pending.discard(p)
                        continue
                    nxt[p] = at + 1
                    if nxt[p] >= ends[p]:
                        pending.discard(p)
                    scanned += 1
                    record = _record(msg)
                    if not needle or _matches(record, needle):
                        records.append(record)
                    if len(records) >= limit and not newest:
                        break
        finally:
            consumer.close()
    records.sort(key=lambda r: (r["timestamp"] or 0, r["partition"], r["offset"]))
    del records[:-limit]
    return {
        "topic": topic,
        "records": records,
        "scanned": scanned,
        "next": {str(p): o for p, o in sorted(nxt.items())},
        "end_offsets": {str(p): e for p, e in sorted(ends.items())},
    }


def _start_offsets(
    admin: KafkaAdmin,
    topic: str,
    ids: list[int],
    marks: dict[tuple[str, int], list[int]],
    start: str,
    offset: int | None,
    timestamp_ms: int | None,
    positions: Mapping[int, int] | None,
    limit: int,
) -> dict[int, int]:
    low = {p: marks[(topic, p)][0] for p in ids}
    high = {p: marks[(topic, p)][1] for p in ids}
    if start == "earliest":
        return low
    if start == "latest":
        return {p: max(low[p], high[p] - limit) for p in ids}
    if start == "offset":
        if offset is None:
            raise ValueError("offset is required to browse from an offset")
        return {p: min(max(offset, low[p]), high[p]) for p in ids}
    if start == "timestamp":
        if timestamp_ms is None:
            raise ValueError("timestamp is required to browse from a timestamp")
        found = admin.offsets_for_time(topic, ids, timestamp_ms)
        return {p: high[p] if found.get(p, -1) < 0 else found[p] for p in ids}
    if start == "positions":
        given = positions or {}
        return {p: min(max(given.get(p, high[p]), low[p]), high[p]) for p in ids}
    raise ValueError(f"Unknown start {start!r}: use earliest, latest, offset or timestamp")


def produce(
    admin: KafkaAdmin,
    topic: str,
    *,
    value: str | None,
    key: str | None = None,
    headers: Mapping[str, str] | None = None,
    partition: int | None = None,
) -> dict[str, Any]:
    """Writes one record and waits for the broker's acknowledgement; returns where it landed."""
    if topic not in admin.metadata().topics:
        raise LookupError(f"Topic {topic} not found")
    producer = Producer({**admin.client_config, "acks": "all", "enable.idempotence": False})
    delivered: dict[str, Any] = {}

    def on_delivery(err: Any, msg: Any) -> None:
        delivered.update(error=err, partition=msg.partition(), offset=msg.offset())

    kwargs: dict[str, Any] = {"on_delivery": on_delivery}
    if partition is not None:
        kwargs["partition"] = partition
    producer.produce(
        topic,
        value=None if value is None else value.encode("utf-8"),
        key=None if key in (None, "") else str(key).encode("utf-8"),
        headers=[(k, v.encode("utf-8")) for k, v in (headers or {}).items()],
        **kwargs,
    )
    producer.flush(TIMEOUT)
    if not delivered:
        raise TimeoutError(f"The broker did not acknowledge the record within {TIMEOUT:.0f}s")
    if delivered["error"] is not None:
        raise RuntimeError(str(delivered["error"]))
    return {"topic": topic, "partition": delivered["partition"], "offset": delivered["offset"]}
