"""FileSinkTask: appends records to one file, one line each, durable on commit.

``put`` only formats records into an in-memory buffer (written out when it exceeds
``buffer.bytes``); ``flush`` writes the buffer, fsyncs, and then records in a sidecar file
(``.<name>.sluice-sink.json`` beside the output) the file's size and, per partition, the next
offset it holds. ``pre_commit`` returns only those fsynced offsets, so the group never
commits a record that is not on disk.

The sidecar makes the file exactly-once across crashes, which Kafka Connect's
FileStreamSink is not: it is written at the first start too (the file's size then, no
offsets); on start, bytes past the recorded size (written after the last flush, before a
kill -9, even before the first flush) are truncated, ``open`` rewinds each partition to its
recorded next offset, and ``put`` skips any record below it (if the group's committed offset
lags the sidecar, the redelivered records are already in the file). Delete the sidecar to
write a topic again.
Records from the file source carry ``file.stream``/``file.seq`` headers that keep their values
when the source re-sends them after a crash (it is at-least-once); with ``dedupe`` (default)
the sink skips a record whose sequence number is not above the last one written for its
stream in its partition, and keeps those numbers in the sidecar too. A file source -> topic
-> file sink pipeline is thus exactly-once across kill -9 when a file's records stay in one
partition (a single-partition topic, the default for auto-created topics).

Without ``file`` the sink writes to stdout, as Kafka Connect does, with no such guarantee.

Raw lines: when ``put`` gets a ``SinkRecordBatch`` whose values the value converter turns into
UTF-8 text as they are (StringConverter in UTF-8, or ByteArrayConverter on valid UTF-8), the
``raw`` format writes the consumed bytes without building records, and dedupe reads the raw
``file.stream``/``file.seq`` header bytes. It writes the same bytes and keeps the same offsets
and sequence numbers as the record path, which handles everything else (JSON lines, other
converters, a batch that does not convert cleanly, where the error policy decides).

Only one task writes a file (the connector makes one task config), so no locking is needed;
all calls come from the task's thread.
"""

from __future__ import annotations

import base64
import json
import logging
import operator
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, cast

from connectors.file.config import FileSinkConfig
from hub.api import ConnectError, SinkRecord, SinkTask, SinkTaskContext, TopicPartition
from hub.api.paths import open_checked
from hub.api.sink import SinkRecordBatch, decodes

_STREAM, _SEQ = "file.stream", "file.seq"
_first, _second = operator.itemgetter(0), operator.itemgetter(1)

log = logging.getLogger(__name__)


def sidecar_path(path: str) -> str:
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.sluice-sink.json")


def _text(value: Any) -> str:
    """Kafka Connect's FileStreamSink prints ``value.toString()``: keep that for raw lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, dict | list):
        return json.dumps(value, default=_json_default, separators=(",", ":"))
    return "null" if value is None else str(value)


def _resent(
    record: SinkRecord, key: tuple[str, int], seqs: dict[tuple[str, int, str], int]
) -> bool:
    """True if the record is a file source's re-send of an event already written: its
    ``file.seq`` is not above the last one seen for its ``file.stream`` in this partition.
    (Per partition, because only within one partition is the source's order kept.)"""
    stream = seq = None
    for header in record.headers:
        if header.key == _SEQ:
            seq = header.value
        elif header.key == _STREAM:
            stream = header.value
    if stream is None or seq is None:
        return False
    return _seen(_seq_number(seq), _stream_name(stream), key, seqs)


def _seq_number(seq: Any) -> int | None:
    """A ``file.seq`` header value as the sequence number, None if it is not one."""
    try:
        return int(seq.decode() if isinstance(seq, bytes) else seq)
    except (TypeError, ValueError):
        return None


def _stream_name(stream: Any) -> str:
    return stream.decode() if isinstance(stream, bytes) else str(stream)


def _seen(
    n: int | None, stream: str, key: tuple[str, int], seqs: dict[tuple[str, int, str], int]
) -> bool:
    """True if sequence number ``n`` of ``stream`` is not above the last one written (a
    re-send); else records it as the last one. ``n`` None: not a sequenced record."""
    if n is None:
        return False
    skey = (*key, stream)
    if n <= seqs.get(skey, 0):
        return True
    seqs[skey] = n
    return False


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(value).decode("ascii")
    return str(value)


class FileSinkTask(SinkTask):
    def __init__(self, context: SinkTaskContext) -> None:
        super().__init__(context)
        self._fd: int | None = None
        self._buf: list[bytes] = []  # encoded lines, each chunk ending with a newline
        self._buf_bytes = 0
        self._streams: dict[bytes, str | None] = {}  # raw file.stream header -> its stream name
        self._written_raw: dict[tuple[str, int], int] = {}  # next offset handed to the OS
        self._durable: dict[TopicPartition, int] = {}  # next offset fsynced + in the sidecar
        self._seqs: dict[tuple[str, int, str], int] = {}  # last file.seq per stream written

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = FileSinkConfig.parse(config)
        self._name = f"{config.get('name', 'file-sink')}-0"
        self._json = self.config.format == "json"
        path = self.config.file
        if path is None:
            log.info("[%s] writing to stdout", self._name)
            return
        self._fd = open_checked(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        state = self._load_sidecar(path)
        if state is None:
            # Record the size now: a crash before the first flush then truncates what this
            # task appended, instead of keeping it while the records are delivered again.
            self._save_sidecar()
        else:
            size = int(state.get("size", 0))
            actual = os.fstat(self._fd).st_size
            if actual > size:
                log.warning("[%s] %s: dropping %d unflushed bytes past %d from before a crash",
                            self._name, path, actual - size, size)  # fmt: skip
                os.ftruncate(self._fd, size)
            for key, next_offset in state.get("offsets", {}).items():
                topic, _, partition = key.rpartition("/")
                self._durable[TopicPartition(topic, int(partition))] = int(next_offset)
            self._written_raw = {(tp.topic, tp.partition): n for tp, n in self._durable.items()}
            for key, seq in state.get("streams", {}).items():
                topic, partition, stream = key.rsplit("/", 2)
                self._seqs[(topic, int(partition), stream)] = int(seq)
        log.info("[%s] appending to %s (%s)", self._name, path, self.config.format)

    def _load_sidecar(self, path: str) -> dict[str, Any] | None:
        try:
            fd = open_checked(sidecar_path(path), os.O_RDONLY)
            with os.fdopen(fd, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ConnectError(f"unreadable sink state {sidecar_path(path)}: {exc}") from exc
        return data if isinstance(data, dict) else None

    def open(self, partitions: Sequence[TopicPartition]) -> None:
        for tp in partitions:
            if tp in self._durable:
                self.context.offset(tp, self._durable[tp])

    def put(self, records: Sequence[SinkRecord]) -> None:
        if type(records) is SinkRecordBatch and self._raw_lines(records):
            self._put_raw(records)
            return
        # Record path: plain (topic, partition) tuples and str lines, encoded once per batch.
        if not records:
            # The stream went quiet (the worker calls put([]) on an idle poll): write out what
            # is buffered so the file shows it now, not at the next commit. Not fsynced: the
            # sidecar written by flush still decides what survives a crash.
            self._write()
            return
        lines: list[str] = []
        written, as_json = self._written_raw, self._json
        dedupe, seqs = self.config.dedupe, self._seqs
        for record in records:
            key = (record.topic, record.partition or 0)
            offset = record.offset
            if offset < written.get(key, -1):
                continue  # already in the file (see module docstring)
            written[key] = offset + 1
            if dedupe and record.headers and _resent(record, key, seqs):
                continue
            value = record.value
            if as_json:
                line = self._json_line(record)
            else:
                line = value if type(value) is str else _text(value)
            lines.append(line)
        if lines:
            lines.append("")  # for the last newline
            self._buffer("\n".join(lines).encode("utf-8", "surrogateescape"))

    def _buffer(self, chunk: bytes) -> None:
        self._buf.append(chunk)
        self._buf_bytes += len(chunk)
        if self._buf_bytes >= self.config.buffer_bytes:
            self._write()

    def _raw_lines(self, batch: SinkRecordBatch) -> bool:
        """True if the consumed values are the very bytes the record path would write: raw
        format, values that are UTF-8 text as consumed, and a batch that converts cleanly
        (else the records apply the error policy). ``dedupe`` also needs exact headers."""
        if self._json or (self.config.dedupe and not batch.headers_exact):
            return False
        conversion = batch.value_conversion
        if conversion.is_text("utf-8"):
            return batch.converts_cleanly()
        # bytes values are written as UTF-8 text with U+FFFD for invalid sequences
        return (
            conversion.kind == "bytes"
            and batch.converts_cleanly()
            and decodes(batch.values, "utf-8")
        )

    def _put_raw(self, batch: SinkRecordBatch) -> None:
        """``put`` from the columns: the offset check and dedupe of the record path, done for
        the whole batch at once when it is one partition in offset order whose file headers
        are plain (one stream, increasing sequence numbers); message by message otherwise."""
        values = batch.values
        topics, partitions, offsets = batch.topics, batch.partitions, batch.offsets
        written = self._written_raw
        count = len(offsets)
        single = partitions.count(partitions[0]) == count and topics.count(topics[0]) == count
        keep: Sequence[int] | None = None
        if single and all(map(operator.lt, offsets, offsets[1:])):
            key = (topics[0], partitions[0])
            start = 0
            floor = written.get(key, -1)
            while start < count and offsets[start] < floor:
                start += 1  # already in the file (see module docstring)
            if start == count:
                return
            if not self.config.dedupe or self._dedupe_in_order(batch, key, start):
                written[key] = offsets[-1] + 1
                keep = range(start, count)
        if keep is None:
            keep = self._kept(batch)
        lines = values if len(keep) == count else [values[i] for i in keep]
        if None in lines:
            lines = [b"null" if v is None else v for v in lines]  # as the record path prints
        if lines:
            self._buffer(b"\n".join(cast("list[bytes]", lines)))  # no None left
            self._buffer(b"\n")

    def _dedupe_in_order(self, batch: SinkRecordBatch, key: tuple[str, int], start: int) -> bool:
        """For one partition from ``start``: True, with the sequence state updated, if no
        record is a re-send (no record has both file headers, or all are of one stream with
        increasing sequence numbers above the last written). False, state untouched, if it
        takes a record-by-record look."""
        headers = batch.headers[start:] if start else batch.headers
        if not any(headers):
            return True
        # A producer (the file source) writes the same header keys in the same order on every
        # record. Check that where it matters, column by column in C: every record has the
        # first one's length, and from the first file header on, ``file.stream``/``file.seq``
        # stand where the first record has its last ones and nowhere after (the last of
        # repeated keys counts, as in _resent's scan). Any other shape: record by record.
        first, count = headers[0], len(headers)
        if not first:
            return False
        width = len(first)
        layout = list(map(_first, first))
        if _STREAM not in layout or _SEQ not in layout:
            return False
        at_stream = width - 1 - layout[::-1].index(_STREAM)
        at_seq = width - 1 - layout[::-1].index(_SEQ)
        try:
            if list(map(len, headers)).count(width) != count:  # type: ignore[arg-type]
                return False
        except TypeError:  # a record without headers among others
            return False
        streams: list[bytes | None] = []
        seqs: list[bytes | None] = []
        for at in range(min(at_stream, at_seq), width):
            column = list(map(operator.itemgetter(at), headers))  # type: ignore[arg-type]
            names = list(map(_first, column))
            if at == at_stream:
                if names.count(_STREAM) != count:
                    return False
                streams = list(map(_second, column))
            elif at > at_stream and _STREAM in names:
                return False
            if at == at_seq:
                if names.count(_SEQ) != count:
                    return False
                seqs = list(map(_second, column))
            elif at > at_seq and _SEQ in names:
                return False
        if streams[0] is None or streams.count(streams[0]) != count:
            return False
        try:
            # ASCII digits: the number SimpleHeaderConverter (an int, or a Decimal past int64)
            # and StringHeaderConverter give; int(b"") raises, as the record path's int("")
            if not b"".join(seqs).isdigit():  # type: ignore[arg-type]
                return False
            numbers = list(map(int, seqs))  # type: ignore[arg-type]
        except (TypeError, ValueError):  # a None or empty file.seq
            return False
        stream = self._stream(batch, key[0], streams[0])
        if stream is None:
            return False
        skey = (*key, stream)
        if numbers[0] <= self._seqs.get(skey, 0) or not all(map(operator.lt, numbers, numbers[1:])):
            return False
        self._seqs[skey] = numbers[-1]
        return True

    def _kept(self, batch: SinkRecordBatch) -> list[int]:
        """Indexes of the messages to write, checked one by one as the record path does."""
        topics, partitions, offsets = batch.topics, batch.partitions, batch.offsets
        headers = batch.headers
        written, seqs, dedupe = self._written_raw, self._seqs, self.config.dedupe
        keep = []
        for i, offset in enumerate(offsets):
            key = (topics[i], partitions[i])
            if offset < written.get(key, -1):
                continue
            written[key] = offset + 1
            if dedupe and (raw := headers[i]):
                stream = seq = None
                for name, data in raw:
                    if name == _SEQ:
                        seq = data
                    elif name == _STREAM:
                        stream = data
                if stream is not None and seq is not None:
                    named = self._stream(batch, key[0], stream)
                    if named is not None and _seen(self._seq(batch, key[0], seq), named, key, seqs):
                        continue
            keep.append(i)
        return keep

    def _stream(self, batch: SinkRecordBatch, topic: str, data: bytes) -> str | None:
        """The stream name a record's ``file.stream`` header with these bytes gives (None if
        the header converter makes it None, e.g. ``null``). Cached: streams are few."""
        try:
            return self._streams[data]
        except KeyError:
            pass
        if len(self._streams) >= 1024:
            self._streams.clear()
        value = batch.convert_header(topic, _STREAM, data)
        name = None if value is None else _stream_name(value)
        self._streams[data] = name
        return name

    @staticmethod
    def _seq(batch: SinkRecordBatch, topic: str, data: bytes | None) -> int | None:
        if data and data.isdigit():  # see _dedupe_in_order
            return int(data)
        return _seq_number(batch.convert_header(topic, _SEQ, data))

    @property
    def _written(self) -> dict[TopicPartition, int]:
        return {TopicPartition(t, p): n for (t, p), n in self._written_raw.items()}

    @staticmethod
    def _json_line(record: SinkRecord) -> str:
        obj = {
            "topic": record.topic,
            "partition": record.partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
            "key": record.key,
            "value": record.value,
            "headers": {h.key: h.value for h in record.headers},
        }
        return json.dumps(obj, default=_json_default, separators=(",", ":"), ensure_ascii=False)

    def _write(self) -> None:
        if not self._buf:
            return
        data = b"".join(self._buf)
        self._buf.clear()
        self._buf_bytes = 0
        if self._fd is None:
            sys.stdout.buffer.write(data)
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        self._write()
        if self._fd is None:
            sys.stdout.buffer.flush()
            self._durable = dict(self._written)
            return
        self._save_sidecar()
        self._durable = dict(self._written)

    def _save_sidecar(self) -> None:
        """fsync the output, then record its size, offsets and sequence numbers atomically."""
        assert self._fd is not None
        os.fsync(self._fd)
        state = {
            "size": os.fstat(self._fd).st_size,
            "offsets": {f"{tp.topic}/{tp.partition}": n for tp, n in self._written.items()},
            "streams": {f"{t}/{p}/{stream}": n for (t, p, stream), n in self._seqs.items()},
        }
        _write_atomically(sidecar_path(self.config.file or ""), json.dumps(state).encode())

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        self.flush(offsets)
        durable = self._durable
        return {tp: min(off, durable.get(tp, off)) for tp, off in offsets.items()}

    def stop(self) -> None:
        if self._fd is not None:
            self.flush({})  # nothing buffered is lost or, thanks to the sidecar, repeated
            os.close(self._fd)
            self._fd = None
        log.info("[%s] stopped", getattr(self, "_name", "file-sink"))

    @property
    def durable_offsets(self) -> dict[TopicPartition, int]:
        """Next offset per partition that is fsynced and recorded (for tests and status)."""
        return dict(self._durable)


def _write_atomically(path: str, data: bytes) -> None:
    """tmp + fsync + rename + directory fsync: the sidecar is either old or new, never torn."""
    tmp = f"{path}.tmp"
    fd = open_checked(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
