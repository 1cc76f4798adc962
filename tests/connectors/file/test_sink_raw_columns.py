"""FileSinkTask fed a ``SinkRecordBatch`` (raw columns) vs the same records as a plain list.

Each scenario is a sequence of consumed batches (real confluent-kafka ``Message`` objects).
One task gets them as ``SinkRecordBatch`` es, another as the records the worker would build
(the real String/ByteArray converters and SimpleHeaderConverter; a message whose conversion
fails is skipped, as ``errors.tolerance=all`` does). Output files, sidecars and committed
offsets must be byte-identical, and the raw path must not have built records where it can
do without. The worker itself is covered in tests/hub/runtime/test_sink_batch.py.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Message

from connectors.file.sink_task import FileSinkTask, sidecar_path
from hub.api import Converter, Header, SinkRecord, TimestampType, TopicPartition
from hub.api.sink import RawConversion, SinkRecordBatch
from hub.converters.bytes import ByteArrayConverter
from hub.converters.headers import SimpleHeaderConverter
from hub.converters.string import StringConverter
from tests.connectors.file.conftest import SinkContext

TOPIC = "raw-cols"
Spec = tuple  # (offset, value, headers) or (offset, value, headers, partition)


def fh(stream: bytes | None, seq: bytes | None, *more: tuple[str, bytes | None]) -> list[Any]:
    """The file source's header layout: path, host, stream, offset, seq (+ extras)."""
    return [("file.path", b"/var/log/a.log"), ("file.host", b"h1"), ("file.stream", stream),
            ("file.offset", b"100"), ("file.seq", seq), *more]  # fmt: skip


def messages(specs: list[Spec]) -> list[Message]:
    out = []
    for spec in specs:
        offset, value, headers = spec[:3]
        partition = spec[3] if len(spec) > 3 else 0
        message = Message(topic=TOPIC, partition=partition, offset=offset, key=None,
                          value=value, headers=headers, timestamp=(1, 1_700_000_000))  # fmt: skip
        out.append(message)
    return out


class Conversions:
    """The record path of the worker for one connector config, with tolerance=all."""

    def __init__(self, value_converter: Converter) -> None:
        self.key = StringConverter({}, True)
        self.value = value_converter
        self.header = SimpleHeaderConverter({})

    def records(self, msgs: list[Message]) -> list[SinkRecord]:
        out = []
        for m in msgs:
            try:
                key = self.key.to_connect(TOPIC, m.key())
                value = self.value.to_connect(TOPIC, m.value())
                headers = tuple(
                    Header(k, (sv := self.header.to_connect(TOPIC, k, v)).value, sv.schema)
                    for k, v in m.headers() or ()
                )
            except Exception:
                continue  # tolerated and skipped
            record = SinkRecord(topic=TOPIC, partition=m.partition(), offset=m.offset(),
                                key=key.value, value=value.value, key_schema=key.schema,
                                value_schema=value.schema, timestamp=m.timestamp()[1],
                                headers=headers, timestamp_type=TimestampType(0))  # fmt: skip
            out.append(record)
        return out

    def batch(self, msgs: list[Message], built: list[int]) -> SinkRecordBatch:
        def build() -> list[SinkRecord]:
            built.append(1)
            return self.records(msgs)

        def conversion(c: Converter) -> RawConversion:
            if type(c) is StringConverter:
                return RawConversion("text", codecs.lookup(c.encoding).name, null_safe=True)
            return RawConversion("bytes", null_safe=True)

        return SinkRecordBatch(
            msgs, [m.topic() for m in msgs], [m.partition() for m in msgs],
            [m.offset() for m in msgs], build=build, key_conversion=conversion(self.key),
            value_conversion=conversion(self.value),
            convert_header=lambda t, k, d: self.header.to_connect(t, k, d).value,
        )  # fmt: skip


def run_both(
    tmp_path: Path,
    batches: list[list[Spec]],
    value_converter: Converter | None = None,
    restart_after: int | None = None,
    **config: str,
) -> tuple[bytes, bytes, int]:
    """Feeds ``batches`` to a raw-batch task and a record-list task; asserts equal outputs and
    commits; returns (output, sidecar, how many batches the raw task had built records for)."""
    conv = Conversions(value_converter or StringConverter({}, False))
    built: list[int] = []
    results = []
    for kind in ("raw", "records"):
        path = tmp_path / f"{kind}.out"
        cfg = {"name": kind, "topics": TOPIC, "file": str(path), **config}

        def start(cfg: dict[str, str] = cfg) -> FileSinkTask:
            task = FileSinkTask(SinkContext(cfg))
            task.start(cfg)
            task.open([TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)])
            return task

        task, commits = start(), []
        for i, specs in enumerate(batches):
            msgs = messages(specs)
            if kind == "raw":
                batch: Any = conv.batch(msgs, built)
                task.put(batch)
                batch.settle()  # as the worker does after put
            else:
                task.put(conv.records(msgs))
            ends = {TopicPartition(TOPIC, m.partition()): m.offset() + 1 for m in msgs}
            commits.append(dict(task.pre_commit(ends)))
            if restart_after == i:
                task.stop()
                task = start()
        task.stop()
        results.append((path.read_bytes(), Path(sidecar_path(str(path))).read_bytes(), commits))
    (raw_out, raw_side, raw_commits), (rec_out, rec_side, rec_commits) = results
    assert raw_out == rec_out
    assert raw_side == rec_side
    assert raw_commits == rec_commits
    return raw_out, raw_side, len(built)


def seq_batch(first_offset: int, seqs: range, stream: bytes = b"s1") -> list[Spec]:
    return [(first_offset + i, b"line %d" % n, fh(stream, b"%d" % n)) for i, n in enumerate(seqs)]


def test_in_order_file_source_batches_never_build_records(tmp_path: Path) -> None:
    batches = [seq_batch(0, range(1, 501)), seq_batch(500, range(501, 1001))]
    out, side, built = run_both(tmp_path, batches)
    assert out == b"".join(b"line %d\n" % n for n in range(1, 1001))
    assert b'"raw-cols/0/s1": 1000' in side
    assert built == 0


def test_resent_events_are_skipped_within_and_across_batches_and_restarts(tmp_path: Path) -> None:
    batches = [
        seq_batch(0, range(1, 6)),
        seq_batch(5, range(3, 9)),  # the source re-sent 3..5 after a crash, then 6..8
        seq_batch(11, range(8, 10)) + seq_batch(13, range(2, 4)),  # 8 again, 9, then 2..3
        seq_batch(15, range(10, 12)),  # after a restart of the sink (state from the sidecar)
        seq_batch(17, range(11, 14)),  # starts with the last one written: re-sent
    ]
    out, _, _ = run_both(tmp_path, batches, restart_after=2)
    assert out == b"".join(b"line %d\n" % n for n in range(1, 14))


def test_mixed_batches(tmp_path: Path) -> None:
    batches = [
        [(0, b"a", fh(b"s1", b"1")), (1, None, None), (2, b"", []), (3, b"b", fh(b"s2", b"1")),
         (4, b"c", [("other", b"x")]), (5, b"d", fh(b"s1", b"2")), (6, b"dup", fh(b"s2", b"1")),
         (7, None, fh(b"s1", b"3"))],
        # two partitions interleaved; the same stream counts per partition
        [(8, b"e", fh(b"s1", b"4")), (0, b"p1", fh(b"s1", b"1"), 1), (9, b"f", fh(b"s1", b"4")),
         (1, b"p1 again", fh(b"s1", b"1"), 1), (2, b"p1 next", fh(b"s1", b"2"), 1)],
        # redelivered below what is written (a rewind), then new records
        [(5, b"d", fh(b"s1", b"2")), (9, b"f", fh(b"s1", b"4")), (10, b"g", fh(b"s1", b"5"))],
    ]  # fmt: skip
    out, _, _ = run_both(tmp_path, batches)
    assert out.split(b"\n") == [b"a", b"null", b"", b"b", b"c", b"d", b"null", b"e", b"p1",
                                b"p1 next", b"g", b""]  # fmt: skip


@pytest.mark.parametrize(
    "headers",
    [
        [("file.stream", b"s1"), ("file.seq", b"")],  # empty: not a sequence number
        [("file.stream", b"s1"), ("file.seq", b"abc")],
        [("file.stream", b"s1"), ("file.seq", b"1.0")],  # a float header: int(1.0) == 1
        [("file.stream", b"null"), ("file.seq", b"1")],  # converts to None: no stream
        [("file.stream", b"true"), ("file.seq", b"1")],  # a boolean stream name, as str()
        [("file.stream", b"s1"), ("file.seq", b"0001")],
        [("file.stream", b"s1"), ("file.seq", b"99999999999999999999999")],  # past int64
        [("file.stream", b"s1"), ("file.seq", None)],
        [("file.seq", b"1"), ("file.stream", b"s1"), ("file.seq", b"7")],  # last one counts
        [("file.stream", b"s1"), ("file.seq", b"1"), ("file.stream", b"s2")],
    ],
)
def test_unusual_file_headers_dedupe_as_records_do(
    tmp_path: Path, headers: list[tuple[str, bytes | None]]
) -> None:
    batches = [
        [(i, b"v%d" % i, headers) for i in range(3)],
        [(3, b"w", fh(b"s1", b"5")), *((4 + i, b"x%d" % i, headers) for i in range(2))],
    ]
    run_both(tmp_path, batches)


def h3(stream: bytes, second: tuple[str, bytes], third: tuple[str, bytes]) -> list[Any]:
    return [("file.stream", stream), second, third]


def test_header_layout_changing_within_a_batch(tmp_path: Path) -> None:
    y = ("y", b"")
    batches = [
        [(0, b"a", h3(b"s2", ("file.seq", b"10"), y))],
        # c's last file.stream is s2, where 2 is a re-send
        [(1, b"b", h3(b"s1", ("file.seq", b"1"), y)),
         (2, b"c", h3(b"s1", ("file.seq", b"2"), ("file.stream", b"s2")))],
        # e has no file.seq: written, and s1 stays at 5
        [(3, b"d", h3(b"s1", ("file.seq", b"5"), y)), (4, b"e", h3(b"s1", ("other", b"6"), y))],
        # g is of stream s2, where 8 is a re-send
        [(5, b"f", h3(b"s1", ("file.seq", b"6"), y)), (6, b"g", h3(b"s2", ("file.seq", b"8"), y))],
        # i's last file.seq is 1: a re-send
        [(7, b"h", h3(b"s1", ("file.seq", b"8"), y)),
         (8, b"i", h3(b"s1", ("file.seq", b"9"), ("file.seq", b"1")))],
        # k has no file.stream: written, and s1 stays at 9
        [(9, b"j", h3(b"s1", ("file.seq", b"9"), y)),
         (10, b"k", [("z", b"s1"), ("file.seq", b"10"), y])],
        [(11, b"l", h3(b"s1", ("file.seq", b"10"), y))],
    ]  # fmt: skip
    out, side, _ = run_both(tmp_path, batches)
    assert out == b"a\nb\nd\ne\nf\nh\nj\nk\nl\n"
    assert b'"raw-cols/0/s1": 10' in side


def test_invalid_utf8_falls_back_to_records_and_their_error_policy(tmp_path: Path) -> None:
    batches = [seq_batch(0, range(1, 4)), [(3, b"ok", None), (4, b"bad \xff", None), (5, b"k", [])]]
    out, _, built = run_both(tmp_path, batches)
    assert out == b"line 1\nline 2\nline 3\nok\nk\n"  # the invalid one skipped (tolerated)
    assert built == 1  # only the batch that does not convert cleanly


def test_bytes_values_are_written_as_utf8_text(tmp_path: Path) -> None:
    batches = [
        [(0, b"plain", None), (1, "caf\u00e9".encode(), None)],
        [(2, b"bad \xff\xfe", None), (3, b"after", None)],
    ]
    out, _, built = run_both(tmp_path, batches, value_converter=ByteArrayConverter({}, False))
    assert out == "plain\ncaf\u00e9\nbad \ufffd\ufffd\nafter\n".encode()
    assert built == 1


LATIN1 = [(3, "\u00e9t\u00e9".encode("latin-1"), None), (4, b"x", fh(b"s1", b"1"))]
UTF8 = [(3, "\u00e9t\u00e9".encode(), fh(b"s1", b"2")), (4, b"x", fh(b"s1", b"1"))]


@pytest.mark.parametrize(
    ("make", "config", "tail"),
    [
        (lambda: StringConverter({"converter.encoding": "latin-1"}, False), {}, LATIN1),
        (lambda: StringConverter({}, False), {"format": "json"}, UTF8),
        (lambda: StringConverter({}, False), {"dedupe": "false"}, UTF8),
    ],
)
def test_other_settings_match_the_record_path(
    tmp_path: Path, make: Callable[[], Converter], config: dict[str, str], tail: list[Spec]
) -> None:
    run_both(tmp_path, [seq_batch(0, range(1, 4)), tail], value_converter=make(), **config)
