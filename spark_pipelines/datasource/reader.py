"""Batch and streaming readers: one Spark partition per topic partition and offset range.

Planning (which partitions, which offsets) happens on the driver through a short-lived client;
``read`` runs in a Python worker and sees only its pickled :class:`TopicRange`. Offsets handed to
Structured Streaming are ``{topic: {partition: next offset}}``; the checkpoint records them, so a
restarted query resumes exactly after the last committed range (no gap, no re-read beyond the
batch Spark itself replays).

Defaults follow Spark's Kafka source: batch reads default to earliest..latest, streams start at
latest; partitions that appear while a stream runs (new topic matching a pattern, more
partitions) start at their earliest offset; ``maxOffsetsPerTrigger`` caps a micro-batch and is
split across partitions in proportion to their backlog.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from spark_pipelines.datasource import _kafka
from spark_pipelines.datasource._options import LATEST, Offsets, Options, resolve_spec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TopicRange(InputPartition):
    """``start <= offset < end`` of one topic partition; everything a task needs, picklable."""

    kafka_config: dict[str, str]
    topic: str
    partition: int
    start: int
    end: int
    json_fields: tuple[str, ...] = ()
    native: bool = True


def _read(part: TopicRange) -> Iterator[pa.RecordBatch]:
    yield from _kafka.read_range(
        part.kafka_config,
        part.topic,
        part.partition,
        part.start,
        part.end,
        part.json_fields,
        native=part.native,
    )


class _Planner:
    """Driver-side offset resolution shared by the batch and the streaming reader."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.opts = Options(options)
        self.kafka_config = self.opts.kafka_config()
        self.subscription = self.opts.subscription()
        self.json_fields = self.opts.json_fields()
        self.native = self.opts.fetch_native()

    def snapshot(self) -> tuple[list[tuple[str, int]], dict[tuple[str, int], tuple[int, int]]]:
        client = _kafka.consumer(self.kafka_config)
        try:
            parts = _kafka.list_partitions(client, self.subscription)
            return parts, _kafka.watermarks(client, parts)
        finally:
            client.close()

    def resolve(self, key: str, default: str, *, use_timestamp: bool) -> Offsets:
        """Concrete offsets for option ``key`` (or ``startingTimestamp``) on every partition."""
        spec = self.opts.offsets_spec(key, default)  # malformed options fail before any I/O
        stamp = self.opts.int("startingTimestamp") if use_timestamp else None
        parts, marks = self.snapshot()
        if stamp is not None:
            client = _kafka.consumer(self.kafka_config)
            try:
                found = _kafka.offsets_for_timestamp(client, parts, stamp)
            finally:
                client.close()
            return _nest({tp: found[tp] for tp in parts})
        return _nest({tp: _kafka.resolve(resolve_spec(spec, *tp), marks[tp]) for tp in parts})

    def ranges(self, start: Offsets, end: Offsets) -> list[TopicRange]:
        out = []
        for topic, parts in sorted(end.items()):
            for p, stop in sorted(parts.items(), key=lambda kv: int(kv[0])):
                begin = start.get(topic, {}).get(p, 0)
                if stop > begin:
                    out.append(
                        TopicRange(
                            self.kafka_config,
                            topic,
                            int(p),
                            begin,
                            stop,
                            self.json_fields,
                            self.native,
                        )
                    )
        return out


def _nest(flat: Mapping[tuple[str, int], int]) -> Offsets:
    out: Offsets = {}
    for (topic, p), offset in flat.items():
        out.setdefault(topic, {})[str(p)] = offset
    return out


class SluiceBatchReader(DataSourceReader):
    """``spark.read.format("sluice")``: startingOffsets/endingOffsets (earliest..latest)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.planner = _Planner(options)
        if self.planner.opts.offsets_spec("endingOffsets", "latest") == "earliest":
            raise ValueError("endingOffsets=earliest is not allowed (as in Spark's Kafka source)")

    def partitions(self) -> Sequence[InputPartition]:
        start = self.planner.resolve("startingOffsets", "earliest", use_timestamp=True)
        end = self.planner.resolve("endingOffsets", "latest", use_timestamp=False)
        return self.planner.ranges(start, end)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, TopicRange)
        return _read(partition)


class SluiceStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("sluice")``; supports maxOffsetsPerTrigger and availableNow."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.planner = _Planner(options)
        self.max_per_trigger = self.planner.opts.int("maxOffsetsPerTrigger")
        self._initial: Offsets | None = None
        self._target: Offsets | None = None

    def initialOffset(self) -> dict:
        # Spark calls this more than once for a new query; "latest" must not move in between.
        if self._initial is None:
            self._initial = self.planner.resolve("startingOffsets", "latest", use_timestamp=True)
        return self._initial

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.max_per_trigger is not None:
            return ReadMaxRows(self.max_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._available()

    def _available(self) -> Offsets:
        parts, marks = self.planner.snapshot()
        return _nest({tp: marks[tp][1] for tp in parts})

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        available = self._target if self._target is not None else self._available()
        # Partitions known before but gone from metadata for a moment keep their position.
        latest: Offsets = {t: dict(ps) for t, ps in start.items()}
        for topic, parts in available.items():
            for p, high in parts.items():
                begin = start.get(topic, {}).get(p, 0)
                latest.setdefault(topic, {})[p] = max(begin, high)
        if isinstance(limit, ReadMaxRows):
            latest = _cap(start, latest, limit.max_rows)
        return latest

    def reportLatestOffset(self) -> dict | None:
        return self._available()

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        return self.planner.ranges(start, end)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, TopicRange)
        return _read(partition)

    def commit(self, end: dict) -> None:
        # Nothing to do: positions live in Spark's checkpoint, not in a consumer group.
        log.debug("committed offsets %s", end)


def _cap(start: Offsets, latest: Offsets, max_rows: int) -> Offsets:
    """Limits the batch to ``max_rows`` offsets, shared in proportion to each backlog.

    Every partition with a backlog gets at least one offset so a small limit cannot starve a
    partition forever; rounding down keeps the total <= max_rows except for that minimum.
    """
    backlog = {
        (t, p): high - start.get(t, {}).get(p, 0)
        for t, ps in latest.items()
        for p, high in ps.items()
    }
    total = sum(n for n in backlog.values() if n > 0)
    if total <= max_rows:
        return latest
    capped: Offsets = {t: dict(ps) for t, ps in latest.items()}
    for (t, p), n in backlog.items():
        if n > 0:
            take = max(1, n * max_rows // total)
            capped[t][p] = start.get(t, {}).get(p, 0) + take
    return capped


__all__ = ["LATEST", "SluiceBatchReader", "SluiceStreamReader", "TopicRange"]
