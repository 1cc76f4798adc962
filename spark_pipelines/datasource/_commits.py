"""Per-writer commit markers in the compacted topic ``__sluice_spark_commits``.

Key = writer id; value = ``{"batch": B, "marks": {topic: {partition: high watermark}}}``
recorded after batch B's rows were all acknowledged. Reading the markers scans the whole
topic, which compaction keeps at about one record per writer.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from spark_pipelines.datasource import _kafka
from spark_pipelines.datasource._options import Subscription
from spark_pipelines.datasource._produce import producer

log = logging.getLogger(__name__)

TOPIC = "__sluice_spark_commits"
HEADER = "sluice.write"


@dataclass(frozen=True)
class WriterState:
    batch: int
    """Last batch id whose commit marker exists; -1 when none."""
    partial: frozenset[tuple[int, int]]
    """(task, row) pairs of batch ``batch + 1`` already in the output."""


def ensure_topic(kafka_config: dict[str, str]) -> None:
    admin = AdminClient(dict(kafka_config))  # (its stub wants the wider value type)
    if TOPIC in admin.list_topics(timeout=_kafka.TIMEOUT_S).topics:
        return
    new = NewTopic(
        TOPIC, num_partitions=1, replication_factor=1, config={"cleanup.policy": "compact"}
    )
    for future in admin.create_topics([new]).values():
        try:
            future.result(_kafka.TIMEOUT_S)
        except Exception as exc:
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise


def _last_marker(kafka_config: dict[str, str], writer_id: str) -> dict | None:
    ensure_topic(kafka_config)
    client = _kafka.consumer(kafka_config)
    try:
        tp = TopicPartition(TOPIC, 0)
        low, high = client.get_watermark_offsets(tp, timeout=_kafka.TIMEOUT_S)
    finally:
        client.close()
    marker = None
    for batch in _kafka.read_range(kafka_config, TOPIC, 0, low, high):
        for key, value in zip(
            batch.column("key").to_pylist(), batch.column("value").to_pylist(), strict=False
        ):
            if key == writer_id.encode():
                marker = json.loads(value) if value is not None else None
    return marker


def load(kafka_config: dict[str, str], writer_id: str, topic: str | None) -> WriterState:
    """The writer's last committed batch and what of the next batch is already written."""
    marker = _last_marker(kafka_config, writer_id)
    if marker is None:
        # No batch committed yet: note where the outputs end now, so a crash before the first
        # commit scans only what this query wrote.
        marks = _high_marks(kafka_config, [topic] if topic else [])
        record_marks(kafka_config, writer_id, -1, marks)
        return WriterState(-1, frozenset())
    batch, marks = int(marker["batch"]), marker["marks"]
    if topic and topic not in marks:
        marks[topic] = {}
    prefix = f"{writer_id}|{batch + 1}|".encode()
    seen: set[tuple[int, int]] = set()
    current = _high_marks(kafka_config, list(marks))
    for t, parts in current.items():
        for p, high in parts.items():
            start = marks.get(t, {}).get(p, 0)
            for rb in _kafka.read_range(kafka_config, t, int(p), start, high):
                for headers in rb.column("headers").to_pylist():
                    for h in headers or ():
                        if h["key"] == HEADER and h["value"].startswith(prefix):
                            _task, _row = h["value"][len(prefix) :].decode().split("|")
                            seen.add((int(_task), int(_row)))
    return WriterState(batch, frozenset(seen))


def _high_marks(kafka_config: dict[str, str], topics: list[str]) -> dict[str, dict[str, int]]:
    if not topics:
        return {}
    client = _kafka.consumer(kafka_config)
    try:
        parts = _kafka.list_partitions(client, Subscription(topics=tuple(topics)))
        marks = _kafka.watermarks(client, parts)
    finally:
        client.close()
    out: dict[str, dict[str, int]] = {}
    for (t, p), (_low, high) in marks.items():
        out.setdefault(t, {})[str(p)] = high
    return out


def record(kafka_config: dict[str, str], writer_id: str, batch: int, topics: list[str]) -> None:
    """Marks ``batch`` committed; called on the driver after every task's acks."""
    record_marks(kafka_config, writer_id, batch, _high_marks(kafka_config, topics))


def record_marks(kafka_config: dict[str, str], writer_id: str, batch: int, marks: dict) -> None:
    prod = producer(kafka_config)
    prod.produce(TOPIC, json.dumps({"batch": batch, "marks": marks}).encode(), writer_id.encode())
    if prod.flush(_kafka.TIMEOUT_S):
        raise RuntimeError(f"commit marker of writer {writer_id} batch {batch} not acknowledged")
    log.debug("writer %s committed batch %d", writer_id, batch)
