"""Following one path across appends, rotation and truncation: ``TailedFile``.

State per path: an open fd (pinned to one inode), ``read_pos`` (bytes read from it), complete
lines read but not yet emitted, and the trailing partial line. Reading is ``os.pread`` of
1 MiB chunks split on b"\\n" — no per-line syscalls. Each poll first ``stat``s the path:

- another inode at the path (rename + recreate rotation), or no file (renamed, not yet
  recreated): keep reading the old fd to its end first, then emit its unterminated last line
  and pending multiline event, close it and open the new file at 0. A path that stays missing
  is closed after ``MISSING_GRACE_S`` and remembered, so the same inode coming back resumes.
- same inode but smaller than ``read_pos``, or its first bytes (fingerprint) changed
  (copytruncate, ``> file``): emit what was read, then start again at 0.

A record's source offset is ``{"position": byte after the event, "inode", "device",
"fingerprint", "fingerprint_bytes"}`` so a restart can tell the same file from a rotated or
rewritten one; a bare ``{"position"}`` (a Kafka Connect offset) is trusted when the file is
long enough. Not thread-safe: one task thread owns it.
"""

from __future__ import annotations

import logging
import os
import zlib
from collections.abc import Mapping
from typing import Any, NamedTuple

from connectors.file._identity import (
    Expect,
    crc,
    find_by_inode,
    find_predecessor,
    fingerprint_ok,
    line_start_before,
    regular_stat,
)
from connectors.file._multiline import Event, MultilineAssembler
from connectors.file._records import RecordFactory, make_header
from hub.api import SourceRecord

log = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 20
FINGERPRINT_BYTES = 256
MISSING_GRACE_S = 5.0
MAX_LINE_BYTES = 8 << 20  # a longer line is emitted in pieces rather than buffered forever


class FileOptions(NamedTuple):
    topic: str
    encoding: str
    host: str | None
    multiline_pattern: str | None
    multiline_timeout_s: float
    task: str  # names the task in log lines
    sequence_headers: bool = True


class TailedFile:
    def __init__(self, path: str, options: FileOptions) -> None:
        self.path = path
        self._opts = options
        self._log = f"[{options.task}] {path}"
        self._factory = RecordFactory(options.topic, {"filename": path})
        self._ident: dict[str, Any] = {}  # the per-file part of every source offset
        self._set_stream("", 0)  # named on first use (``_name_stream``) unless resumed
        self._origin: tuple[int, int, int] | None = None  # (dev, ino, position) a stream began
        self._multiline = (
            MultilineAssembler(options.multiline_pattern, options.multiline_timeout_s)
            if options.multiline_pattern
            else None
        )
        self.fd: int | None = None
        self._expect: Expect | None = None
        self._missing_since: float | None = None
        self._successors: list[tuple[int, os.stat_result]] = []  # newer files at the path
        self._pending: tuple[tuple[int, int], ...] = ()  # their (device, inode), in offsets
        self._attach_state(-1, -1, 0)

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

    # -- opening and resuming ---------------------------------------------------------------

    def start(self, committed: Mapping[str, Any] | None, from_end: bool) -> None:
        """First open: resume at ``committed`` if it still describes this file, else per policy."""
        if committed is not None and "position" in committed:
            self._expect = Expect.from_offset(committed)
            if committed.get("stream"):
                self._set_stream(str(committed["stream"]), int(committed.get("seq") or 0))
        self._try_open(regular_stat(self.path), from_end=from_end and self._expect is None)

    def _try_open(self, st: os.stat_result | None, from_end: bool = False) -> bool:
        if st is None:
            return False
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        fst = os.fstat(fd)
        exp, self._expect = self._expect, None
        position = 0
        if exp is not None:
            if exp.inode is None or (exp.device, exp.inode) == (fst.st_dev, fst.st_ino):
                if fst.st_size >= exp.position and fingerprint_ok(fd, exp):
                    position = exp.position
                else:
                    log.warning(
                        "%s: truncated or replaced since offset %d", self._log, exp.position
                    )
            elif exp.committed and self._open_predecessor(exp):
                os.close(fd)  # the old inode is drained first; the poll loop then switches
                self._pin_pending(exp)
                self._watch()  # to the file at the path now, pinned before it rotates too
                return True
        elif from_end:
            position = line_start_before(fd, fst.st_size)
        self.fd = fd
        self._attach_state(fst.st_dev, fst.st_ino, position)
        if not self._stream and self._origin is None:
            self._origin = (fst.st_dev, fst.st_ino, position)
        log.info("%s: tailing from byte %d", self._log, position)
        return True

    def _open_predecessor(self, exp: Expect) -> bool:
        """After a rotation while stopped, finish the old inode (found beside the path)."""
        found = find_predecessor(self.path, exp)
        if found is None:
            log.warning("%s: rotated while stopped; old file not found, lines after byte %d "
                        "of it are lost", self._log, exp.position)  # fmt: skip
            return False
        self.fd, fst, where, position = found
        self._attach_state(fst.st_dev, fst.st_ino, position)
        log.info("%s: finishing rotated %s from byte %d", self._log, where, position)
        return True

    def _pin_pending(self, exp: Expect) -> None:
        """Re-pins the files that had replaced the committed one when it was read (several
        rotations before the crash), so they are read in order rather than skipped."""
        for device, inode in exp.pending:
            if (device, inode) == (self._dev, self._ino):
                continue
            found = find_by_inode(self.path, device, inode)
            if found is not None:
                fd, fst, where = found
                self._successors.append((fd, fst))
                log.info("%s: will read rotated %s next", self._log, where)
        self._pending_changed()

    def _pending_changed(self) -> None:
        self._pending = tuple((fst.st_dev, fst.st_ino) for _, fst in self._successors)
        self._ident = {**self._ident, "pending": self._pending}

    def _attach_state(self, device: int, inode: int, position: int) -> None:
        self._dev, self._ino = device, inode
        self._read_pos = position
        self._line_pos = position  # file offset where self._lines[self._li] starts
        self._lines: list[bytes] = []
        self._li = 0
        self._tail = b""
        self._seen: tuple[int, int] = (-1, -1)
        self._fp, self._fp_len = "", 0
        self._update_fingerprint()
        if self._multiline is not None:
            self._multiline.reset()

    def _update_fingerprint(self) -> None:
        if (
            self.fd is not None
            and self._fp_len < FINGERPRINT_BYTES
            and self._read_pos > self._fp_len
        ):
            data = os.pread(self.fd, min(FINGERPRINT_BYTES, self._read_pos), 0)
            self._fp, self._fp_len = crc(data), len(data)
        self._ident = {
            "inode": self._ino,
            "device": self._dev,
            "fingerprint": self._fp,
            "fingerprint_bytes": self._fp_len,
            "stream": self._stream,
            "pending": self._pending,
        }

    def close(self) -> None:
        for fd, _ in self._successors:
            os.close(fd)
        self._successors.clear()
        self._pending_changed()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    # -- polling ------------------------------------------------------------------------------

    def poll(self, out: list[SourceRecord], limit: int, now: float, rescan: bool) -> None:
        """Appends new events to ``out`` while ``len(out) < limit`` (may exceed it by the last
        line of a finished file). A closed path is only looked for again when ``rescan``."""
        if self.fd is None and not (rescan and self._try_open(regular_stat(self.path))):
            return
        self._watch()  # pin a new file at the path now, even if the old one takes many polls
        for _ in range(10_000):  # bounded: each pass reads a chunk or changes state
            self._emit(out, limit, now)
            if len(out) >= limit:
                return
            st = self._watch()
            assert self.fd is not None
            own = os.fstat(self.fd)  # truncation is a property of the inode held, not the path
            if own.st_size < self._read_pos or self._rewritten(own):
                log.warning("%s: truncated at byte %d; reading from 0", self._log, self._read_pos)
                self._finish(out)
                self._attach_state(self._dev, self._ino, 0)
            if self._read_chunk():
                if len(self._tail) > MAX_LINE_BYTES:  # no newline in sight: bound the memory
                    log.warning("%s: line over %d bytes at %d split", self._log, MAX_LINE_BYTES,
                                self._read_pos - len(self._tail))  # fmt: skip
                    self._emit(out, 1 << 62, now)
                    self._emit_tail(out, now)
                continue
            # end of the current inode
            if self._successors:
                self._retire(out, remember=False)
                self.fd, fst = self._successors.pop(0)
                self._attach_state(fst.st_dev, fst.st_ino, 0)
                self._pending_changed()
                log.info("%s: rotated; reading inode %d from 0", self._log, fst.st_ino)
                continue
            if st is None:
                if self._missing_since is None:
                    self._missing_since = now
                if now - self._missing_since >= MISSING_GRACE_S:
                    self._retire(out, remember=True)
                    log.info("%s: gone; closed", self._log)
            break
        if self._multiline is not None and self._multiline.due(now) and len(out) < limit:
            event = self._multiline.flush()
            if event is not None:
                out.append(self._record(event))

    def _watch(self) -> os.stat_result | None:
        """Stats the path; opens a file that replaced ours (rotation) as the next to read, so
        it is pinned even if it is rotated away in turn before we finish the current one."""
        st = regular_stat(self.path)
        if st is None:
            return None
        self._missing_since = None
        latest = self._successors[-1][1] if self._successors else None
        identity = (st.st_dev, st.st_ino)
        if identity == (self._dev, self._ino) or (
            latest is not None and identity == (latest.st_dev, latest.st_ino)
        ):
            return st
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        self._successors.append((fd, os.fstat(fd)))
        self._pending_changed()
        return st

    def _rewritten(self, st: os.stat_result) -> bool:
        """Same inode, but the first bytes differ from what was read: truncated and refilled."""
        seen = (st.st_size, st.st_mtime_ns)
        if seen == self._seen or not self._fp_len or self.fd is None:
            return False
        self._seen = seen
        return crc(os.pread(self.fd, self._fp_len, 0)) != self._fp

    def _read_chunk(self) -> bool:
        assert self.fd is not None and self._li == len(self._lines)
        data = os.pread(self.fd, CHUNK_BYTES, self._read_pos)
        if not data:
            return False
        self._read_pos += len(data)
        buf = self._tail + data if self._tail else data
        lines = buf.split(b"\n")
        self._tail = lines.pop()
        self._lines, self._li = lines, 0
        self._line_pos = self._read_pos - len(buf)
        self._update_fingerprint()
        return True

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

    def _emit(self, out: list[SourceRecord], limit: int, now: float) -> None:
        if not self._stream and self._li < len(self._lines):
            self._name_stream()
        if self._multiline is not None:
            self._emit_multiline(out, limit, now)
            return
        i = self._li
        stop = min(len(self._lines), i + max(0, limit - len(out)))
        if stop > i:
            self._line_pos, self._seq = self._factory.extend_lines(
                out,
                self._lines,
                (i, stop),
                self._line_pos,
                self._seq,
                self._opts.encoding,
                self._static,
                self._ident,
                self._opts.sequence_headers,
            )
            self._li = stop

    def _emit_multiline(self, out: list[SourceRecord], limit: int, now: float) -> None:
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

    def _finish(self, out: list[SourceRecord]) -> None:
        """No more bytes will come from this inode/content: emit everything read so far,
        including an unterminated last line (it can no longer be completed)."""
        self._emit(out, 1 << 62, 0.0)
        self._emit_tail(out)
        if self._multiline is not None:
            event = self._multiline.flush()
            if event is not None:
                out.append(self._record(event))

    def _emit_tail(self, out: list[SourceRecord], now: float = 0.0) -> None:
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

    def _retire(self, out: list[SourceRecord], remember: bool) -> None:
        self._finish(out)
        if remember:
            self._expect = Expect(
                self._read_pos, self._dev, self._ino, self._fp, self._fp_len, False
            )
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
