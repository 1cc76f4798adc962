"""Unit tests of FileSinkTask (raw/JSON lines, flush and pre_commit semantics, crash
recovery through its sidecar), calling put/flush directly with an in-test context."""

from __future__ import annotations

import json
import os
from pathlib import Path

from connectors.file.sink_task import FileSinkTask, sidecar_path
from hub.api import Header, SinkRecord, TopicPartition
from tests.connectors.file.conftest import SinkContext

TP = TopicPartition("connect-test", 0)


def rec(offset: int, value, partition: int = 0, **kw) -> SinkRecord:
    return SinkRecord(topic="connect-test", partition=partition, offset=offset, value=value, **kw)


def start(path, **config) -> tuple[FileSinkTask, SinkContext]:
    cfg = {"name": "sink", "topics": "connect-test", "file": str(path), **config}
    ctx = SinkContext(cfg)
    task = FileSinkTask(ctx)
    task.start(cfg)
    task.open([TP])
    return task, ctx


def test_raw_lines_like_kafka_connect(tmp_path):
    out = tmp_path / "out.txt"
    task, _ = start(out)
    task.put([rec(0, "hello"), rec(1, b"bytes"), rec(2, {"a": 1}), rec(3, None), rec(4, 7)])
    task.flush({TP: 5})
    assert out.read_text().splitlines() == ["hello", "bytes", '{"a":1}', "null", "7"]
    task.stop()


def test_json_lines_carry_record_metadata(tmp_path):
    out = tmp_path / "out.jsonl"
    task, _ = start(out, format="json")
    task.put([rec(0, "v", key=b"k", timestamp=1700, headers=(Header("file.path", "/x"),))])
    task.flush({TP: 1})
    (line,) = out.read_text().splitlines()
    assert json.loads(line) == {
        "topic": "connect-test",
        "partition": 0,
        "offset": 0,
        "timestamp": 1700,
        "key": "k",
        "value": "v",
        "headers": {"file.path": "/x"},
    }
    task.stop()


def test_put_buffers_and_pre_commit_returns_only_flushed_offsets(tmp_path):
    out = tmp_path / "out.txt"
    task, _ = start(out)
    task.put([rec(i, f"l{i}") for i in range(3)])
    assert out.read_text() == ""  # buffered, not written
    assert task.durable_offsets == {}
    committed = task.pre_commit({TP: 3})
    assert committed == {TP: 3}
    assert out.read_text() == "l0\nl1\nl2\n"
    state = json.loads(Path(sidecar_path(str(out))).read_text())
    assert state == {"size": 9, "offsets": {"connect-test/0": 3}, "streams": {}}
    task.stop()


def test_small_buffer_writes_through_but_commits_only_after_flush(tmp_path):
    out = tmp_path / "out.txt"
    task, _ = start(out, **{"buffer.bytes": "4"})
    task.put([rec(0, "abcdef")])
    assert out.read_text() == "abcdef\n"  # written (page cache), not yet fsynced
    assert task.durable_offsets == {}
    task.stop()


def test_an_idle_put_writes_the_buffer_without_making_it_durable(tmp_path):
    out = tmp_path / "out.txt"
    task, _ = start(out)
    task.put([rec(0, "quiet")])
    assert out.read_text() == ""
    task.put([])  # the worker's put on an idle poll
    assert out.read_text() == "quiet\n"
    assert task.durable_offsets == {}  # only flush fsyncs and records the sidecar
    # The sidecar written at start records the empty file and no offsets: a crash now would
    # truncate what the idle put appended.
    state = json.loads(Path(sidecar_path(str(out))).read_text())
    assert state["size"] == 0 and state["offsets"] == {}
    task.stop()


def test_crash_before_flush_is_neither_lost_nor_repeated(tmp_path):
    out = tmp_path / "out.txt"
    task, _ = start(out, **{"buffer.bytes": "1"})
    task.put([rec(0, "a"), rec(1, "b")])
    task.pre_commit({TP: 2})  # durable: a, b
    task.put([rec(2, "c"), rec(3, "d")])  # written through the buffer, never flushed
    os.close(task._fd)  # kill -9: no stop(), no flush
    # the group may have committed less (2) or nothing; either way the restart rewinds
    task, ctx = start(out)
    assert out.read_text() == "a\nb\n"  # unflushed tail dropped
    assert ctx.rewinds == {TP: 2}
    task.put([rec(1, "b"), rec(2, "c"), rec(3, "d")])  # a lagging group redelivers b too
    task.pre_commit({TP: 4})
    assert out.read_text() == "a\nb\nc\nd\n"
    task.stop()


def test_partitions_tracked_separately(tmp_path):
    out = tmp_path / "out.txt"
    task, _ = start(out)
    tp1 = TopicPartition("connect-test", 1)
    task.put([rec(0, "p0"), rec(0, "p1", partition=1), rec(1, "p1b", partition=1)])
    assert task.pre_commit({TP: 1, tp1: 2}) == {TP: 1, tp1: 2}
    assert sorted(out.read_text().splitlines()) == ["p0", "p1", "p1b"]
    task.stop()


def test_stdout_when_no_file(capsysbinary):
    cfg = {"topics": "connect-test"}
    task = FileSinkTask(SinkContext(cfg))
    task.start(cfg)
    task.put([rec(0, "to-stdout")])
    assert task.pre_commit({TP: 1}) == {TP: 1}
    assert capsysbinary.readouterr().out == b"to-stdout\n"
    task.stop()


def test_stop_flushes_everything(tmp_path):
    out = tmp_path / "out.txt"
    task, _ = start(out)
    task.put([rec(0, "x")])
    task.stop()
    assert out.read_text() == "x\n"
    assert json.loads(Path(sidecar_path(str(out))).read_text())["offsets"] == {"connect-test/0": 1}


def seq_rec(offset: int, value: str, stream: str, seq: int, partition: int = 0) -> SinkRecord:
    headers = (Header("file.path", "/x"), Header("file.stream", stream), Header("file.seq", seq))
    return rec(offset, value, partition=partition, headers=headers)


def test_resent_file_source_events_are_skipped_across_restarts(tmp_path):
    out = tmp_path / "out.txt"
    task, _ = start(out)
    task.put([seq_rec(i, f"l{i + 1}", "s1", i + 1) for i in range(3)])
    task.pre_commit({TP: 3})
    task.stop()
    # the source crashed after sending l3 (seq 3) but before its offset was committed at
    # seq 1: it re-sends seq 2..3 and continues; the topic holds them twice
    task, _ = start(out)
    task.put([seq_rec(3, "l2", "s1", 2), seq_rec(4, "l3", "s1", 3), seq_rec(5, "l4", "s1", 4)])
    task.pre_commit({TP: 6})
    assert out.read_text().splitlines() == ["l1", "l2", "l3", "l4"]
    task.put([seq_rec(6, "fresh", "s2", 1)])  # a new stream (offsets were reset): written
    task.pre_commit({TP: 7})
    assert out.read_text().splitlines()[-1] == "fresh"
    task.stop()


def test_dedupe_can_be_disabled_and_string_header_values_work(tmp_path):
    out = tmp_path / "out.txt"
    task, _ = start(out, dedupe="false")
    task.put([seq_rec(0, "a", "s1", 1), seq_rec(1, "a", "s1", 1)])
    task.pre_commit({TP: 2})
    assert out.read_text() == "a\na\n"
    task.stop()
    out2 = tmp_path / "out2.txt"
    task, _ = start(out2)
    task.put([seq_rec(0, "a", "s1", "1"), seq_rec(1, "a", "s1", b"1")])
    task.pre_commit({TP: 2})
    assert out2.read_text() == "a\n"
    task.stop()


def test_file_sink_declares_exactly_once_delivery():
    """``test_crash_before_flush_is_neither_lost_nor_repeated`` shows it; the API says it."""
    from connectors.file.connector import FileSinkConnector
    from hub.api import ExactlyOnceSupport

    assert FileSinkConnector.exactly_once_delivery({}) is ExactlyOnceSupport.SUPPORTED
