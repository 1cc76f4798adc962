"""FileSinkTask: appends records to one file, one line each, durable on commit.

``put`` only formats records into an in-memory buffer (written out when it exceeds
``buffer.bytes``); ``flush`` writes the buffer, fsyncs, and then records in a sidecar file
(``.<name>.sluice-sink.json`` beside the output) the file's size and, per partition, the next
offset it holds. ``pre_commit`` returns only those fsynced offsets, so the group never
commits a record that is not on disk.

The sidecar makes the file exactly-once across crashes, which Kafka Connect's
FileStreamSink is not: on start, bytes past the recorded size (written after the last flush,
before a kill -9) are truncated, ``open`` rewinds each partition to its recorded next offset,
and ``put`` skips any record below it (if the group's committed offset lags the sidecar, the
redelivered records are already in the file). Delete the sidecar to write a topic again.
Records from the file source carry ``file.stream``/``file.seq`` headers that keep their values
when the source re-sends them after a crash (it is at-least-once); with ``dedupe`` (default)
the sink skips a record whose sequence number is not above the last one written for its
stream in its partition, and keeps those numbers in the sidecar too. A file source -> topic
-> file sink pipeline is thus exactly-once across kill -9 when a file's records stay in one
partition (a single-partition topic, the default for auto-created topics).

Without ``file`` the sink writes to stdout, as Kafka Connect does, with no such guarantee.

Only one task writes a file (the connector makes one task config), so no locking is needed;
all calls come from the task's thread.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from connectors.file.config import FileSinkConfig
from hub.api import ConnectError, SinkRecord, SinkTask, SinkTaskContext, TopicPartition

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
        if header.key == "file.seq":
            seq = header.value
        elif header.key == "file.stream":
            stream = header.value
    if stream is None or seq is None:
        return False
    try:
        n = int(seq.decode() if isinstance(seq, bytes) else seq)
    except (TypeError, ValueError):
        return False
    skey = (*key, stream.decode() if isinstance(stream, bytes) else str(stream))
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
        self._buf: list[str] = []  # formatted lines, without their newline
        self._buf_bytes = 0
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
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        state = self._load_sidecar(path)
        if state is not None:
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
            with open(sidecar_path(path), encoding="utf-8") as f:
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
        # Hot path: plain (topic, partition) tuples and str lines, encoded once per write.
        if not records:
            # The stream went quiet (the worker calls put([]) on an idle poll): write out what
            # is buffered so the file shows it now, not at the next commit. Not fsynced: the
            # sidecar written by flush still decides what survives a crash.
            self._write()
            return
        lines, written, as_json = self._buf, self._written_raw, self._json
        dedupe, seqs = self.config.dedupe, self._seqs
        size = 0
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
            size += len(line) + 1
        self._buf_bytes += size
        if self._buf_bytes >= self.config.buffer_bytes:
            self._write()

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
        self._buf.append("")  # for the last newline
        data = "\n".join(self._buf).encode("utf-8", "surrogateescape")
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
        os.fsync(self._fd)
        state = {
            "size": os.fstat(self._fd).st_size,
            "offsets": {f"{tp.topic}/{tp.partition}": n for tp, n in self._written.items()},
            "streams": {f"{t}/{p}/{stream}": n for (t, p, stream), n in self._seqs.items()},
        }
        _write_atomically(sidecar_path(self.config.file or ""), json.dumps(state).encode())
        self._durable = dict(self._written)

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
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
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
