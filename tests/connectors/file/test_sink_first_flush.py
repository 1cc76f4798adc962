"""A file sink killed before its first flush: what it had appended is dropped on restart
(the records come again from the group's offsets), not kept and then written a second time."""

from __future__ import annotations

import os
from pathlib import Path

from connectors.file.sink_task import FileSinkTask, sidecar_path
from hub.api import SinkRecord, TopicPartition
from tests.connectors.file.conftest import SinkContext

TP = TopicPartition("first-flush", 0)


def start(path: Path) -> FileSinkTask:
    cfg = {"name": "sink", "topics": TP.topic, "file": str(path)}
    task = FileSinkTask(SinkContext(cfg))
    task.start(cfg)
    task.open([TP])
    return task


def records(start_offset: int, count: int) -> list[SinkRecord]:
    return [SinkRecord(topic=TP.topic, partition=0, offset=o, value=f"line {o}")
            for o in range(start_offset, start_offset + count)]  # fmt: skip


def test_unflushed_appends_before_the_first_flush_are_not_repeated(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("kept from before\n")  # a file that already existed is appended to
    task = start(out)
    assert Path(sidecar_path(str(out))).exists()
    task.put(records(0, 3))
    task.put([])  # an idle poll writes the buffer out, not yet durable
    assert out.read_text().count("line") == 3
    fd = task._fd
    assert fd is not None
    os.close(fd)  # kill -9: no flush, no stop
    task = start(out)  # the group never committed: every record comes again
    task.put(records(0, 4))
    task.pre_commit({TP: 4})
    task.stop()
    assert out.read_text() == "kept from before\n" + "".join(f"line {o}\n" for o in range(4))
