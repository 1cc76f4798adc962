"""The readers' planning and reads, driven directly (no JVM): offsets, options, columns.

Spark calls exactly these methods (``partitions``/``read``, ``initialOffset``/``latestOffset``/
``partitions``/``read``); driving them here pins the offset behaviour in seconds, and the Spark
tests only check the wiring.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from spark_pipelines.datasource._kafka import ARROW_SCHEMA
from spark_pipelines.datasource._options import OptionError
from spark_pipelines.datasource.reader import SluiceBatchReader, SluiceStreamReader
from tests.spark_pipelines._kafka import add_partitions, create_topic, produce


def _opts(broker, **kw: str) -> dict[str, str]:
    return {"kafka.bootstrap.servers": broker.bootstrap, **kw}


def _rows(reader, parts) -> list[tuple[str, int, int, bytes | None, bytes]]:
    out = []
    for part in parts:
        for batch in reader.read(part):
            assert batch.schema == ARROW_SCHEMA
            d = batch.to_pydict()
            out += list(
                zip(d["topic"], d["partition"], d["offset"], d["key"], d["value"], strict=False)
            )
    return out


def _ranges(parts) -> list[tuple[str, int, int, int]]:
    return [(p.topic, p.partition, p.start, p.end) for p in parts]


def test_batch_reads_earliest_to_latest_one_range_per_partition(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 3)
    for p, n in ((0, 5), (1, 0), (2, 3)):
        produce(
            broker.bootstrap, topic_name, [(f"k{p}-{i}", f"v{i}") for i in range(n)], partition=p
        )
    reader = SluiceBatchReader(_opts(broker, subscribe=topic_name))
    parts = reader.partitions()
    assert _ranges(parts) == [(topic_name, 0, 0, 5), (topic_name, 2, 0, 3)]
    rows = _rows(reader, parts)
    assert [(r[1], r[2]) for r in rows] == [(0, i) for i in range(5)] + [(2, i) for i in range(3)]
    assert rows[0][3:] == (b"k0-0", b"v0")


def test_columns_match_spark_kafka_source(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    produce(broker.bootstrap, topic_name, [(None, b"a")], timestamp_ms=1_700_000_000_123)
    produce(broker.bootstrap, topic_name, [(b"k", b"b")], headers=[("h1", b"x"), ("h2", b"")])
    reader = SluiceBatchReader(_opts(broker, subscribe=topic_name))
    (batch,) = list(reader.read(reader.partitions()[0]))
    first, second = batch.to_pylist()
    assert first["key"] is None and first["headers"] is None and first["timestampType"] == 0
    assert first["timestamp"].timestamp() == 1_700_000_000.123
    assert second["headers"] == [{"key": "h1", "value": b"x"}, {"key": "h2", "value": b""}]
    assert batch.schema.field("partition").type == pa.int32()


def test_starting_and_ending_offsets_json(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 2)
    for p in (0, 1):
        produce(broker.bootstrap, topic_name, [(None, f"{p}-{i}") for i in range(10)], partition=p)
    start = json.dumps({topic_name: {"0": 3, "1": -2}})
    end = json.dumps({topic_name: {"0": -1, "1": 4}})
    reader = SluiceBatchReader(
        _opts(broker, subscribe=topic_name, startingOffsets=start, endingOffsets=end)
    )
    assert _ranges(reader.partitions()) == [(topic_name, 0, 3, 10), (topic_name, 1, 0, 4)]
    assert len(_rows(reader, reader.partitions())) == 11


def test_starting_timestamp(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    produce(broker.bootstrap, topic_name, [(None, "old")] * 4, timestamp_ms=1_000_000)
    produce(broker.bootstrap, topic_name, [(None, "new")] * 2, timestamp_ms=2_000_000)
    reader = SluiceBatchReader(_opts(broker, subscribe=topic_name, startingTimestamp="1500000"))
    assert _ranges(reader.partitions()) == [(topic_name, 0, 4, 6)]
    late = SluiceBatchReader(_opts(broker, subscribe=topic_name, startingTimestamp="9000000"))
    assert late.partitions() == []


def test_subscribe_pattern_and_assign(broker, topic_name):
    a, b = f"{topic_name}-a", f"{topic_name}-b"
    for t in (a, b):
        create_topic(broker.bootstrap, t, 2)
        for p in (0, 1):
            produce(broker.bootstrap, t, [(None, "x")], partition=p)
    pattern = SluiceBatchReader(_opts(broker, subscribePattern=f"{topic_name}-.*"))
    assert [(r[0], r[1]) for r in _ranges(pattern.partitions())] == [(a, 0), (a, 1), (b, 0), (b, 1)]
    assign = SluiceBatchReader(_opts(broker, assign=json.dumps({b: [1]})))
    assert _ranges(assign.partitions()) == [(b, 1, 0, 1)]


@pytest.mark.parametrize(
    "opts, message",
    [
        ({"subscribe": "t"}, "kafka.bootstrap.servers"),
        ({"kafka.bootstrap.servers": "x", "subscribe": "t", "assign": "{}"}, "exactly one"),
        ({"kafka.bootstrap.servers": "x"}, "exactly one"),
        ({"kafka.bootstrap.servers": "x", "subscribe": "t", "startingOffsets": "soon"}, "JSON"),
    ],
)
def test_option_errors_name_the_option(opts, message):
    with pytest.raises(OptionError, match=message):
        SluiceBatchReader(opts).partitions()


def test_stream_offsets_limits_and_new_partitions(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 2)
    produce(broker.bootstrap, topic_name, [(None, "before")] * 3, partition=0)
    reader = SluiceStreamReader(
        _opts(broker, subscribe=topic_name, maxOffsetsPerTrigger="10", startingOffsets="latest")
    )
    start = reader.initialOffset()
    produce(broker.bootstrap, topic_name, [(None, "later")] * 2, partition=0)
    assert reader.initialOffset() == start == {topic_name: {"0": 3, "1": 0}}
    assert reader.getDefaultReadLimit() == ReadMaxRows(10)

    produce(broker.bootstrap, topic_name, [(None, "p0")] * 28, partition=0)  # 30 new on p0
    produce(broker.bootstrap, topic_name, [(None, "p1")] * 10, partition=1)
    capped = reader.latestOffset(start, ReadMaxRows(10))
    assert capped == {topic_name: {"0": 3 + 7, "1": 2}}  # 30:10 backlog share of 10
    full = reader.latestOffset(start, ReadAllAvailable())
    assert full == {topic_name: {"0": 33, "1": 10}}
    rows = _rows(reader, reader.partitions(start, capped))
    assert [(r[1], r[2]) for r in rows] == [(0, o) for o in range(3, 10)] + [(1, 0), (1, 1)]

    add_partitions(broker.bootstrap, topic_name, 3)
    produce(broker.bootstrap, topic_name, [(None, "p2")] * 4, partition=2)
    grown = reader.latestOffset(full, ReadAllAvailable())
    assert grown == {topic_name: {"0": 33, "1": 10, "2": 4}}
    assert _ranges(reader.partitions(full, grown)) == [(topic_name, 2, 0, 4)]


def test_available_now_stops_at_the_target(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    produce(broker.bootstrap, topic_name, [(None, "x")] * 5)
    reader = SluiceStreamReader(_opts(broker, subscribe=topic_name, startingOffsets="earliest"))
    start = reader.initialOffset()
    assert start == {topic_name: {"0": 0}}
    reader.prepareForTriggerAvailableNow()
    produce(broker.bootstrap, topic_name, [(None, "after")] * 5)
    assert reader.latestOffset(start, ReadAllAvailable()) == {topic_name: {"0": 5}}
