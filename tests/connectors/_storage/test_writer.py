"""RollingWriter: rotation rules, names, offsets returned, redelivery and failed commits.

Driven directly with a recording destination (unit tests of the writer's logic); the real
stores are exercised in tests/connectors/s3 and tests/connectors/hdfs.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from connectors._storage.config import StorageSinkConfig
from connectors._storage.destinations import Batch
from connectors._storage.formats import build_format
from connectors._storage.partitioner import build_partitioner
from connectors._storage.writer import RollingWriter
from hub.api import ConfigError, RetriableError, TopicPartition
from hub.api.schema import INT64_SCHEMA, STRING_SCHEMA, struct
from tests.connectors._storage.sink_context import Clock, rec

TP = TopicPartition("t", 0)


class Recorder:
    def __init__(self, resume: int | None = None) -> None:
        self.batches: list[Batch] = []
        self.resume = resume
        self.fail = 0

    def check(self) -> None:
        pass

    def write_batch(self, batch: Batch) -> None:
        if self.fail:
            self.fail -= 1
            raise RetriableError("store unavailable")
        self.batches.append(batch)

    def recover(self, topic: str, partition: int, prefix: str, names: re.Pattern[str]) -> Any:
        return self.resume

    def close(self) -> None:
        pass

    def names(self) -> list[str]:
        return [path for b in self.batches for path, _ in b.files]


def make(
    clock: Clock | None = None, dest: Recorder | None = None, background: bool = False,
    rewinds: dict[TopicPartition, int] | None = None, **raw: Any,
) -> RollingWriter:  # fmt: skip
    rewinds = {} if rewinds is None else rewinds
    cfg = StorageSinkConfig.parse(
        {"topics": "t", "flush.size": 3, "format.class": "JsonFormat", **raw}
    )
    clock = clock or Clock()
    writer = RollingWriter(cfg, build_format(cfg), build_partitioner(cfg, clock),
                           dest or Recorder(), clock, "test", rewinds.__setitem__,
                           background)  # fmt: skip
    writer.open([TP])
    return writer


def test_flush_size_rotation_and_confluent_names() -> None:
    w = make()
    w.put([rec(i, {"i": i}) for i in range(7)])
    dest: Any = w.destination
    assert dest.names() == [
        "topics/t/partition=0/t+0+0000000000.json",
        "topics/t/partition=0/t+0+0000000003.json",
    ]
    assert dest.batches[1].files[0][1] == b'{"i":3}\n{"i":4}\n{"i":5}\n'
    # record 6 is buffered: the committed offset stays at the open batch's start
    assert w.pre_commit({TP: 7}) == {TP: 6}


def test_pre_commit_returns_delivered_offset_when_nothing_is_open() -> None:
    w = make()
    w.put([rec(i, {"i": i}) for i in range(3)])
    assert w.pre_commit({TP: 3}) == {TP: 3}


def test_field_partitions_share_one_batch_first_file_first() -> None:
    w = make(**{"partitioner.class": "FieldPartitioner", "partition.field.name": "k",
                "filename.offset.zero.pad.width": 3, "topics.dir": "out/"})  # fmt: skip
    w.put([rec(0, {"k": "b"}), rec(1, {"k": "a"}), rec(2, {"k": "b"})])
    (batch,) = w.destination.batches  # type: ignore[attr-defined]
    assert (batch.start, batch.next_offset) == (0, 3)
    assert [p for p, _ in batch.files] == ["out/t/k=b/t+0+000.json", "out/t/k=a/t+0+001.json"]


def test_rotate_interval_uses_record_time() -> None:
    w = make(**{"flush.size": 100, "rotate.interval.ms": 1000,
                "timestamp.extractor": "Record"})  # fmt: skip
    w.put([rec(0, {}, timestamp=10_000), rec(1, {}, timestamp=10_999)])
    assert w.destination.batches == []  # type: ignore[attr-defined]
    w.put([rec(2, {}, timestamp=11_000)])  # 1000 ms past the first: the batch rolls first
    (batch,) = w.destination.batches  # type: ignore[attr-defined]
    assert (batch.start, batch.next_offset) == (0, 2)


def test_schedule_rotation_flushes_a_quiet_partition_in_pre_commit() -> None:
    clock = Clock(1_000_000_500)
    w = make(clock, **{"flush.size": 100, "rotate.schedule.interval.ms": 1000})
    w.put([rec(0, {}), rec(1, {})])
    clock.now = 1_000_000_999
    assert w.pre_commit({TP: 2}) == {TP: 0}
    clock.now = 1_000_001_000  # the wall-clock boundary (aligned, not 1000 ms after open)
    assert w.pre_commit({TP: 2}) == {TP: 2}
    assert len(w.destination.batches) == 1  # type: ignore[attr-defined]


def test_schedule_rotation_flushes_a_quiet_partition_on_an_idle_put() -> None:
    clock = Clock(1_000_000_500)
    w = make(clock, **{"flush.size": 100, "rotate.schedule.interval.ms": 1000})
    w.put([rec(0, {}), rec(1, {})])
    clock.now = 1_000_000_999
    w.put([])  # the worker's idle poll, before the boundary: nothing rolls
    assert w.destination.batches == []  # type: ignore[attr-defined]
    clock.now = 1_000_001_000
    w.put([])
    (batch,) = w.destination.batches  # type: ignore[attr-defined]
    assert (batch.start, batch.next_offset) == (0, 2)


def test_schema_change_rolls_the_file() -> None:
    v1 = struct(("id", INT64_SCHEMA))
    v2 = struct(("id", INT64_SCHEMA), ("name", STRING_SCHEMA))
    w = make(**{"flush.size": 100})
    w.put([rec(0, {"id": 0}, schema=v1), rec(1, {"id": 1}, schema=v1),
           rec(2, {"id": 2, "name": "x"}, schema=v2)])  # fmt: skip
    (batch,) = w.destination.batches  # type: ignore[attr-defined]
    assert (batch.start, batch.next_offset) == (0, 2)


def test_redelivered_and_recovered_offsets_are_skipped() -> None:
    w = make(dest=Recorder(resume=5))
    w.put([rec(i, {"i": i}) for i in range(3, 9)])  # 3, 4 are already in committed files
    (batch,) = w.destination.batches  # type: ignore[attr-defined]
    assert (batch.start, batch.next_offset) == (5, 8)
    w.put([rec(6, {"i": 6}), rec(8, {"i": 8})])  # a retried put: 6 is not added twice
    assert w.writers[TP].count == 1


def test_failed_upload_rewinds_the_partition_and_rebuilds_the_batch() -> None:
    dest, rewinds = Recorder(), {}
    dest.fail = 1
    w = make(dest=dest, rewinds=rewinds, background=True)
    w.put([rec(i, {"i": i}) for i in range(4)])  # [0,3) handed to the uploader, which fails
    with pytest.raises(RetriableError):
        w.drain()
    assert rewinds == {TP: 0}  # the worker is asked to seek back to the batch start
    assert w.pre_commit({TP: 4}) == {TP: 0}
    w.put([rec(i, {"i": i}) for i in range(4, 6)])  # the retried put is ignored until the seek
    w.put([rec(i, {"i": i}) for i in range(6)])  # redelivered from 0 after the seek
    w.drain()
    assert [(b.start, b.next_offset) for b in dest.batches] == [(0, 3), (3, 6)]
    assert dest.batches[0].files[0][1] == b'{"i":0}\n{"i":1}\n{"i":2}\n'
    assert w.pre_commit({TP: 6}) == {TP: 6}
    w.stop()


def test_background_upload_offsets_wait_for_the_upload() -> None:
    import threading

    gate = threading.Event()

    class Slow(Recorder):
        def write_batch(self, batch: Batch) -> None:
            gate.wait(10)
            super().write_batch(batch)

    w = make(dest=Slow(), background=True)
    w.put([rec(i, {"i": i}) for i in range(3)])
    assert w.pre_commit({TP: 3}) == {TP: 0}  # uploaded? not yet: nothing to commit
    gate.set()
    w.drain()
    assert w.pre_commit({TP: 3}) == {TP: 3}
    w.stop()


def test_close_drops_the_open_batch() -> None:
    w = make()
    w.put([rec(0, {})])
    w.close([TP])
    assert TP not in w.writers and w.destination.batches == []  # type: ignore[attr-defined]


def test_config_requires_confluent_keys() -> None:
    with pytest.raises(ConfigError) as err:
        StorageSinkConfig.parse({"format.class": "OrcFormat"})
    assert {"flush.size", "topics", "format.class"} <= set(err.value.errors)


def test_hourly_directories_from_record_time_with_rotate_interval() -> None:
    hour = 3_600_000
    base = 1_700_000_000_000 // hour * hour  # 2023-11-14 22:00 UTC
    w = make(**{"flush.size": 100, "partitioner.class": "HourlyPartitioner",
                "timestamp.extractor": "Record", "rotate.interval.ms": hour})  # fmt: skip
    w.put([rec(0, {}, timestamp=base + 1), rec(1, {}, timestamp=base + hour - 1),
           rec(2, {}, timestamp=base + hour + 5)])  # fmt: skip
    (batch,) = w.destination.batches  # type: ignore[attr-defined]
    assert [p for p, _ in batch.files] == [
        "topics/t/year=2023/month=11/day=14/hour=22/t+0+0000000000.json"]  # fmt: skip
    w.commit_all()
    assert w.destination.batches[-1].files[0][0] == (  # type: ignore[attr-defined]
        "topics/t/year=2023/month=11/day=14/hour=23/t+0+0000000002.json"
    )
