"""Turning bytes read from a file into records: lines, multiline events, stream numbering.

``EventEmitter`` holds what was read but not yet emitted: complete lines (``_lines`` from
``_li`` on, the first starting at byte ``_line_pos``) and the partial line after the last
newline (``_tail``, ending at ``_read_pos``); it emits at most ``limit`` records per call.
``TailedFile`` (``_tailer``) subclasses it with everything about following the file itself.

Each event is numbered (``file.seq``) within a *stream* (``file.stream``): the numbers survive
restarts through the committed offset, so an event the source re-sends after a crash carries
the number it had the first time and a sink can drop it. Not thread-safe: one task thread.
"""

from __future__ import annotations

import os
import zlib
from typing import Any, NamedTuple

from connectors.file._identity import FINGERPRINT_BYTES
from connectors.file._multiline import Event, MultilineAssembler
from connectors.file._records import Emitted, RecordFactory, make_header
from hub.api import SourceRecord


class FileOptions(NamedTuple):
    topic: str
    encoding: str
    host: str | None
    multiline_pattern: str | None
    multiline_timeout_s: float
    task: str  # names the task in log lines
    sequence_headers: bool = True


class EventEmitter:
    def __init__(self, path: str, options: FileOptions) -> None:
        self.path = path
        self._opts = options
        self._log = f"[{options.task}] {path}"
        self._factory = RecordFactory(options.topic, {"filename": path})
        self._multiline = (
            MultilineAssembler(options.multiline_pattern, options.multiline_timeout_s)
            if options.multiline_pattern
            else None
        )
        self.fd: int | None = None
        self._dev, self._ino = -1, -1
        self._read_pos = 0
        self._lines: list[bytes] = []
        self._li = 0
        self._line_pos = 0
        self._tail = b""
        self._ident: dict[str, Any] = {}  # the per-file part of every source offset
        self._origin: tuple[int, int, int] | None = None  # (dev, ino, position) a stream began
        self._set_stream("", 0)  # named on first use (``_name_stream``) unless resumed

    def _take(self, data: bytes) -> None:
        """Splits newly read bytes (all earlier lines emitted) into lines and a new tail."""
        assert self._li == len(self._lines)
        buf = self._tail + data if self._tail else data
        lines = buf.split(b"\n")
        self._tail = lines.pop()
        self._lines, self._li = lines, 0
        self._line_pos = self._read_pos - len(buf)

    def _set_stream(self, stream: str, seq: int) -> None:
        """Events are numbered per source partition within a *stream*: a stream starts when
        the path has no committed offset and continues across restarts (the committed offset
        carries it), rotations and truncations. A re-sent event gets the number it had, so a
        sink can drop re-sends by ``file.stream`` + ``file.seq`` (see sink_task)."""
        self._stream, self._seq = stream, seq
        self._ident = {**self._ident, "stream": stream}
        headers = [make_header("file.path", self.path)]
        if self._opts.host is not None:
            headers.append(make_header("file.host", self._opts.host))
        if self._opts.sequence_headers:
            headers.append(make_header("file.stream", stream))
        self._static = tuple(headers)

    def _name_stream(self) -> None:
        """Names a new stream the same way every time it is started over (a crash before any
        offset was committed re-reads the file with the same names, so re-sends stay
        recognisable): from the path, the inode and position it began at, and the file's first
        line. A different file (reused inode), start point or offset reset gives another."""
        dev, ino, position = self._origin or (self._dev, self._ino, self._read_pos)
        first = b""
        if self.fd is not None and (dev, ino) == (self._dev, self._ino):
            first = os.pread(self.fd, FINGERPRINT_BYTES, 0).split(b"\n", 1)[0]
        seed = f"{self.path}|{dev}|{ino}|{position}|".encode("utf-8", "surrogateescape") + first
        self._set_stream(f"s{zlib.crc32(seed):08x}{zlib.adler32(seed):08x}", self._seq)

    def _emit(self, out: Emitted, limit: int, now: float) -> None:
        if not self._stream and self._li < len(self._lines):
            self._name_stream()
        if self._multiline is not None:
            self._emit_multiline(out, limit, now)
            return
        i = self._li
        stop = min(len(self._lines), i + max(0, limit - len(out)))
        if stop > i:
            batch, self._line_pos, self._seq = self._factory.line_batch(
                self._lines,
                (i, stop),
                self._line_pos,
                self._seq,
                self._opts.encoding,
                self._static,
                self._ident,
                self._opts.sequence_headers,
            )
            out.add(batch)
            self._li = stop

    def _emit_multiline(self, out: Emitted, limit: int, now: float) -> None:
        assert self._multiline is not None
        lines, i, pos, enc = self._lines, self._li, self._line_pos, self._opts.encoding
        while i < len(lines) and len(out) < limit:
            raw = lines[i]
            end = pos + len(raw) + 1
            if raw[-1:] == b"\r":
                raw = raw[:-1]
            event = self._multiline.add(pos, end, raw.decode(enc, "replace"), now)
            if event is not None:
                out.append(self._record(event))
            pos = end
            i += 1
        self._li, self._line_pos = i, pos

    def _record(self, event: Event) -> SourceRecord:
        if not self._stream:
            self._name_stream()
        self._seq += 1
        headers = (*self._static, make_header("file.offset", event.start))
        if self._opts.sequence_headers:
            headers = (*headers, make_header("file.seq", self._seq))
        offset = {**self._ident, "position": event.end, "seq": self._seq}
        return self._factory.make(event.text, headers, offset)

    def _finish(self, out: Emitted) -> None:
        """No more bytes will come from this inode/content: emit everything read so far,
        including an unterminated last line (it can no longer be completed)."""
        self._emit(out, 1 << 62, 0.0)
        self._emit_tail(out)
        if self._multiline is not None:
            event = self._multiline.flush()
            if event is not None:
                out.append(self._record(event))

    def _emit_tail(self, out: Emitted, now: float = 0.0) -> None:
        """Emits the bytes after the last newline as a line of their own."""
        if not self._tail:
            return
        start, raw = self._read_pos - len(self._tail), self._tail.removesuffix(b"\r")
        self._tail = b""
        text = raw.decode(self._opts.encoding, "replace")
        event: Event | None = Event(start, self._read_pos, text)
        if self._multiline is not None:
            event = self._multiline.add(start, self._read_pos, text, now)
        if event is not None:
            out.append(self._record(event))
