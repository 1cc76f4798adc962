"""The file source's columnar batches: the same records, offsets and messages as before.

``FileSourceTask.poll`` returns a ``SourceRecordBatch`` of lines, which the worker produces
straight from its columns when it can and materialises into records otherwise. These tests
hold the two ways to one result: the batch's records equal records built one by one (as the
source did before batches), and through a real worker and broker a file produced on the
columnar fast path and the same file produced through records (a transform that passes
everything forces that path) give the same messages and the same committed source offsets.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connectors.file._records import STRING_SCHEMA, Emitted, RecordFactory, make_header
from connectors.file._tailer import CHUNK_BYTES
from hub.api import Header, SourceRecord, SourceRecordBatch
from hub.converters.bytes import ByteArrayConverter
from hub.converters.string import StringConverter
from hub.runtime.config import WorkerConfig
from hub.runtime.herder import Herder
from hub.runtime.source_columns import column_values
from tests.fixtures.broker import BrokerProcess, wait_until
from tests.hub.runtime.conftest import read_topic

IDENTITY = {"inode": 7, "device": 3, "fingerprint": "abc", "fingerprint_bytes": 20,
            "stream": "s1", "pending": ()}  # fmt: skip
STATIC = (make_header("file.path", "/x.log"), make_header("file.stream", "s1"))
# valid ASCII, multi-byte UTF-8, an invalid byte, CRLF, an empty line, a lone CR
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
LINES = [b"plain", "caf\u00e9 \u2603".encode(), b"bad \xff byte", b"crlf\r", b"", b"\r"]


def one_by_one(lines: list[bytes], position: int, seq: int, seq_header: bool) -> list[Any]:
    """The records the source built per line before batches existed (its reference loop)."""
    out = []
    for raw in lines:
        end = position + len(raw) + 1
        seq += 1
        headers: tuple[Header, ...] = (*STATIC, Header("file.offset", position))
        if seq_header:
            headers = (*headers, Header("file.seq", seq))
        out.append(
            SourceRecord(
                topic="logs",
                value=raw.removesuffix(b"\r").decode("utf-8", "replace"),
                value_schema=STRING_SCHEMA,
                headers=headers,
                source_partition={"filename": "/x.log"},
                source_offset={**IDENTITY, "position": end, "seq": seq},
            )
        )
        position = end
    return out


@pytest.mark.parametrize("seq_header", [True, False])
def test_line_batch_records_equal_records_built_one_by_one(seq_header: bool) -> None:
    factory = RecordFactory("logs", {"filename": "/x.log"})
    lines = [b"skipped", *LINES, b"not in span"]
    batch, position, seq = factory.line_batch(
        lines, (1, 1 + len(LINES)), 100, 41, "utf-8", STATIC, IDENTITY, seq_header
    )
    expected = one_by_one(LINES, 100, 41, seq_header)
    assert batch.records() == expected
    assert list(batch) == expected and len(batch) == len(LINES) and batch[2] == expected[2]
    assert batch.last_offset() == expected[-1].source_offset
    assert (position, seq) == (expected[-1].source_offset["position"], 41 + len(LINES))


def test_contiguous_batches_of_one_poll_merge_into_one() -> None:
    factory = RecordFactory("logs", {"filename": "/x.log"})
    out = Emitted()
    first, position, seq = factory.line_batch(LINES, (0, 3), 0, 0, "utf-8", STATIC, IDENTITY, True)
    out.add(first)
    second, _, _ = factory.line_batch(
        LINES, (3, len(LINES)), position, seq, "utf-8", STATIC, IDENTITY, True
    )
    out.add(second)
    result = out.result()
    assert isinstance(result, SourceRecordBatch) and len(out) == len(LINES)
    assert result.records() == one_by_one(LINES, 0, 0, True)
    assert type(result.offset_columns["seq"]) is range  # still a counter, not a list

    # another identity (a rotation) is another batch; the poll result is then plain records
    rotated, _, _ = factory.line_batch(
        LINES, (0, 2), 0, 0, "utf-8", STATIC, {**IDENTITY, "inode": 8}, True
    )
    out.add(rotated)
    flat = out.result()
    assert isinstance(flat, list) and len(flat) == len(LINES) + 2
    assert flat[: len(LINES)] == one_by_one(LINES, 0, 0, True)
    assert flat[-1].source_offset["inode"] == 8


def test_a_poll_across_read_chunks_returns_one_batch(tmp_path: Path, source: Any) -> None:
    log = tmp_path / "big.log"
    lines = [f"{i:08d} {'x' * 50}" for i in range(2 * CHUNK_BYTES // 60)]  # two chunks
    log.write_text("".join(line + "\n" for line in lines))
    src = source(file=str(log), batch_size=str(len(lines)))
    result = src.task.poll()
    assert isinstance(result, SourceRecordBatch)  # what the worker produces from columns
    assert [r.value for r in result] == lines
    assert result.last_offset()["position"] == log.stat().st_size
    # the worker would send the lines' bytes as they are (the default string converter)
    assert _values(result, StringConverter({}, is_key=False)) == log.read_bytes().split(b"\n")[:-1]


def _values(batch: SourceRecordBatch, converter: Any) -> Any:
    return column_values(batch, converter.raw_form())


def test_worker_sends_bytes_as_they_are_only_when_conversion_would_give_them() -> None:
    utf8 = StringConverter({"converter.encoding": "UTF-8"}, is_key=False)
    latin1 = StringConverter({"converter.encoding": "latin-1"}, is_key=False)
    good = [b"plain", "caf\u00e9".encode()]
    text = SourceRecordBatch("t", {"f": 1}, good, encoding="utf8")
    assert _values(text, utf8) == good
    assert _values(text, latin1) is None  # records would be re-encoded: other bytes
    assert _values(SourceRecordBatch("t", {}, [*good, b"\xff"], encoding="utf-8"), utf8) is None
    # a multi-byte character split by the batch's own boundaries is still invalid per value
    split = SourceRecordBatch("t", {}, [b"a\xc3", b"\xa9b"], encoding="utf-8")
    assert _values(split, utf8) is None
    assert _values(SourceRecordBatch("t", {}, ["caf\u00e9"]), latin1) == [b"caf\xe9"]
    assert _values(SourceRecordBatch("t", {}, ["\ud800"]), utf8) is None  # cannot encode
    assert _values(SourceRecordBatch("t", {}, [b"x", None], encoding="utf-8"), utf8) is None
    raw = ByteArrayConverter({}, is_key=False)
    assert _values(SourceRecordBatch("t", {}, [b"\xff\x00"]), raw) == [b"\xff\x00"]
    assert _values(text, raw) is None  # records carry str, which ByteArrayConverter refuses


# -- through a real worker and broker ---------------------------------------------------------


@pytest.fixture
def herder(broker: BrokerProcess, tmp_path: Path) -> Iterator[Herder]:
    unique = uuid.uuid4().hex[:8]
    config = WorkerConfig.from_mapping(
        {"bootstrap.servers": broker.bootstrap, "group.id": f"batches-{unique}",
         "config.storage.topic": f"batches-configs-{unique}",
         "offset.storage.topic": f"batches-offsets-{unique}",
         "status.storage.topic": f"batches-status-{unique}", "offset.flush.interval.ms": 100,
         "file.allowed.paths": str(tmp_path)}
    )  # fmt: skip
    h = Herder(config)
    h.start()
    yield h
    h.stop()


def test_columnar_and_record_paths_produce_the_same_messages_and_offsets(
    herder: Herder, broker: BrokerProcess, tmp_path: Path
) -> None:
    log = tmp_path / "app.log"
    body = [f"{i:05d} line".encode() for i in range(2500)]
    body[1700:1700] = LINES  # one batch is not valid UTF-8 throughout: records for it
    log.write_bytes(b"\n".join(body) + b"\n")
    n = len(body)
    unique = uuid.uuid4().hex[:8]
    topics = {"columns": f"columns-{unique}", "records": f"records-{unique}"}
    common = {"connector.class": "FileStreamSource", "file": str(log), "batch.size": "400",
              "poll.interval.ms": "20", "value.converter": STRING_CONVERTER,
              "key.converter": STRING_CONVERTER}  # fmt: skip
    herder.create_connector("columns", {**common, "topic": topics["columns"]})
    # A filter whose predicate never matches passes every record unchanged, but a configured
    # transform makes the worker materialise each batch and take the per-record path.
    herder.create_connector(
        "records",
        {**common, "topic": topics["records"], "transforms": "keep",
         "transforms.keep.type": "Filter", "transforms.keep.predicate": "never",
         "predicates": "never", "predicates.never.type": "TopicNameMatches",
         "predicates.never.pattern": "no-such-topic"},
    )  # fmt: skip

    def messages(name: str) -> list[tuple[Any, ...]]:
        return [
            (m.key(), m.value(), m.headers())
            for m in read_topic(broker.bootstrap, topics[name], timeout=30)
        ]

    wait_until(lambda: len(messages("columns")) >= n, 60, "the columnar path's messages")
    wait_until(lambda: len(messages("records")) >= n, 60, "the record path's messages")
    columns, records = messages("columns"), messages("records")
    assert columns == records
    assert [v for _, v, _ in columns] == [
        raw.removesuffix(b"\r").decode("utf-8", "replace").encode() for raw in body
    ]
    host = socket.gethostname().encode()
    key, _, headers = columns[1]
    assert key is None
    assert [h for h in headers if h[0] != "file.stream"] == [
        ("file.path", str(log).encode()), ("file.host", host), ("file.offset", b"11"),
        ("file.seq", b"2"),
    ]  # fmt: skip

    def committed(name: str) -> list[Any]:
        return herder.connector_offsets(name)["offsets"]

    size = log.stat().st_size
    for name in topics:

        def at_end(name: str = name) -> bool:
            return [o["offset"]["position"] for o in committed(name)] == [size]

        wait_until(at_end, 30, f"{name}: the end of the file committed")
    assert committed("columns") == committed("records")
    assert committed("columns")[0]["offset"]["seq"] == n
