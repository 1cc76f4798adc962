"""The writers, driven directly with a fake TaskContext: rows out, replays harmless."""

from __future__ import annotations

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from spark_pipelines.datasource import writer as writer_mod
from spark_pipelines.datasource.writer import (
    SluiceBatchWriter,
    SluiceStreamWriter,
    header_token,
)
from tests.spark_pipelines._kafka import create_topic, read_all

SCHEMA = StructType([StructField("key", StringType()), StructField("value", StringType())])


class FakeTaskContext:
    def __init__(self, batch_id: int, partition: int) -> None:
        self.batch_id, self.partition = batch_id, partition

    def getLocalProperty(self, key: str) -> str | None:
        return str(self.batch_id) if key == "streaming.sql.batchId" else None

    def partitionId(self) -> int:
        return self.partition


def _batches(values: list[str]) -> list[pa.RecordBatch]:
    keys = [f"k-{v}" for v in values]
    return [pa.RecordBatch.from_pydict({"key": keys, "value": values})]


def _write(monkeypatch, w: SluiceStreamWriter, batch_id: int, task: int, values: list[str]):
    monkeypatch.setattr(writer_mod.TaskContext, "get", lambda: FakeTaskContext(batch_id, task))
    return w.write(iter(_batches(values)))


def test_batch_writer_produces_key_value_headers_topic_partition(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 2)
    opts = {"kafka.bootstrap.servers": broker.bootstrap, "topic": topic_name}
    header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    schema = StructType(
        [
            StructField("key", BinaryType()),
            StructField("value", StringType()),
            StructField("partition", IntegerType()),
            StructField("headers", ArrayType(header)),
        ]
    )
    w = SluiceBatchWriter(opts, schema)
    rb = pa.RecordBatch.from_pydict(
        {
            "key": [b"a", None],
            "value": ["1", "2"],
            "partition": [1, 0],
            "headers": [[{"key": "h", "value": b"v"}], None],
        }
    )
    msg = w.write(iter([rb]))
    assert (msg.rows, msg.topics) == (2, (topic_name,))
    got = sorted(read_all(broker.bootstrap, topic_name))
    assert got == [(0, 0, None, b"2", []), (1, 0, b"a", b"1", [("h", b"v")])]


def test_stream_writer_skips_committed_and_partly_written_batches(broker, topic_name, monkeypatch):
    create_topic(broker.bootstrap, topic_name, 1)
    opts = {
        "kafka.bootstrap.servers": broker.bootstrap,
        "topic": topic_name,
        "writerId": topic_name,
    }
    first = SluiceStreamWriter(opts, SCHEMA)
    assert first.last_batch == -1
    msgs = [_write(monkeypatch, first, 0, t, [f"b0-t{t}-{i}" for i in range(3)]) for t in (0, 1)]
    first.commit(msgs, 0)
    # Batch 1 crashes after task 0 wrote 2 of its 4 rows, before task 1 ran and before commit.
    _write(monkeypatch, first, 1, 0, ["b1-t0-0", "b1-t0-1"])

    # Restart: Spark replays batch 1 in full (and may replay batch 0 if its checkpoint commit
    # was lost too); only the missing rows reach the topic.
    second = SluiceStreamWriter(opts, SCHEMA)
    assert second.last_batch == 0
    assert second.partial == {(0, 0), (0, 1)}
    replay0 = _write(monkeypatch, second, 0, 0, ["b0-t0-0", "b0-t0-1", "b0-t0-2"])
    assert (replay0.rows, replay0.skipped) == (0, 3)
    t0 = _write(monkeypatch, second, 1, 0, [f"b1-t0-{i}" for i in range(4)])
    t1 = _write(monkeypatch, second, 1, 1, [f"b1-t1-{i}" for i in range(2)])
    assert (t0.rows, t0.skipped, t1.rows, t1.skipped) == (2, 2, 2, 0)
    second.commit([t0, t1], 1)
    assert SluiceStreamWriter(opts, SCHEMA).last_batch == 1

    got = read_all(broker.bootstrap, topic_name)
    values = [v.decode() for _p, _o, _k, v, _h in got]
    assert sorted(values) == sorted(
        [f"b0-t{t}-{i}" for t in (0, 1) for i in range(3)]
        + [f"b1-t0-{i}" for i in range(4)]
        + [f"b1-t1-{i}" for i in range(2)]
    )
    tokens = [header_token(dict(h)["sluice.write"]) for *_, h in got]
    assert len(set(tokens)) == len(tokens) == 12


def test_transactional_stream_writer_is_exactly_once_for_read_committed(
    broker, topic_name, monkeypatch
):
    from confluent_kafka import Producer

    from spark_pipelines.datasource import _transactional
    from tests.broker.transaction.helpers import read_all as read_isolated

    create_topic(broker.bootstrap, topic_name, 1)
    opts = {"kafka.bootstrap.servers": broker.bootstrap, "topic": topic_name,
            "writerId": topic_name, "transactional": "true"}  # fmt: skip
    writer = SluiceStreamWriter(opts, SCHEMA)
    msgs = [_write(monkeypatch, writer, 0, t, [f"b0-t{t}-{i}" for i in range(3)]) for t in (0, 1)]
    assert [(m.rows, m.skipped) for m in msgs] == [(3, 0), (3, 0)]
    writer.commit(msgs, 0)
    # An attempt of batch 1 task 0 died (or hangs) with its transaction open...
    txn_id = _transactional.transactional_id(topic_name, 1, 0)
    zombie = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0,
                       "transactional.id": txn_id})  # fmt: skip
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(topic_name, b"zombie")
    zombie.flush(30)
    # ...the retry fences it (its rows are aborted) and writes the batch; then Spark replays
    # both batches from its checkpoint: the tasks find their markers and write nothing.
    again = SluiceStreamWriter(opts, SCHEMA)
    retry = _write(monkeypatch, again, 1, 0, [f"b1-t0-{i}" for i in range(2)])
    assert (retry.rows, retry.skipped) == (2, 0)
    replays = [_write(monkeypatch, again, 0, 1, ["b0-t1-0", "b0-t1-1", "b0-t1-2"]),
               _write(monkeypatch, again, 1, 0, ["b1-t0-0", "b1-t0-1"])]  # fmt: skip
    assert [(m.rows, m.skipped) for m in replays] == [(0, 3), (0, 2)]
    committed = sorted(v.decode() for *_, v in read_isolated(broker.bootstrap, topic_name))
    assert committed == sorted(
        [f"b0-t{t}-{i}" for t in (0, 1) for i in range(3)] + ["b1-t0-0", "b1-t0-1"]
    )
    everything = read_isolated(broker.bootstrap, topic_name, isolation="read_uncommitted")
    assert b"zombie" in {v for *_, v in everything}  # in the log, aborted
