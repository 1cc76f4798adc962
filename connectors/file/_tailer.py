"""Following one path across appends, rotation and truncation: ``TailedFile``.

State per path: an open fd (pinned to one inode) and ``read_pos`` (bytes read from it); what
was read but not emitted lives in the ``EventEmitter`` base (``_emitter``). Reading is
``os.pread`` of 1 MiB chunks split on b"\\n": no per-line syscalls. Each poll ``stat``s the path:

- another inode at the path (rename + recreate rotation): it is opened at once and queued
  (``_successors``), so it is pinned even if it is rotated away in turn; the old fd is read to
  its end, its unterminated last line and pending multiline event are emitted, and the next
  queued file is read from 0. A path that stays missing is closed after ``MISSING_GRACE_S``
  and remembered, so the same inode coming back resumes.
- the held inode got smaller than ``read_pos``, or its first bytes (fingerprint) changed
  (copytruncate, ``> file``): emit what was read, then start again at 0.

A record's source offset is ``{"position": byte after the event, "inode", "device",
"fingerprint", "fingerprint_bytes", "stream", "seq", "pending"}`` so a restart can tell the
same file from a rotated or rewritten one and find, by inode, the old file and the queued ones;
a bare ``{"position"}`` (a Kafka Connect offset) is trusted when the file is long enough.
Not thread-safe: one task thread owns it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from connectors.file._emitter import EventEmitter, FileOptions
from connectors.file._identity import (
    FINGERPRINT_BYTES,
    Expect,
    crc,
    find_by_inode,
    find_predecessor,
    fingerprint_ok,
    line_start_before,
    regular_stat,
)
from connectors.file._records import Emitted
from hub.api.paths import open_checked

log = logging.getLogger(__name__)

__all__ = ["CHUNK_BYTES", "MAX_LINE_BYTES", "MISSING_GRACE_S", "FileOptions", "TailedFile"]

CHUNK_BYTES = 1 << 20
MISSING_GRACE_S = 5.0
MAX_LINE_BYTES = 8 << 20  # a longer line is emitted in pieces rather than buffered forever


class TailedFile(EventEmitter):
    def __init__(self, path: str, options: FileOptions) -> None:
        super().__init__(path, options)
        self._expect: Expect | None = None
        self._missing_since: float | None = None
        self._successors: list[tuple[int, os.stat_result]] = []  # newer files at the path
        self._pending: tuple[tuple[int, int], ...] = ()  # their (device, inode), in offsets
        self._attach_state(-1, -1, 0)

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
            fd = open_checked(self.path, os.O_RDONLY)
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

    def poll(self, out: Emitted, limit: int, now: float, rescan: bool) -> None:
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

    def bytes_behind(self) -> int:
        """Bytes written to the file (and to files that replaced it) not read yet; 0 while
        it is closed. Caller holds the task's lock, so ``close`` cannot race the fstat."""
        if self.fd is None:
            return 0
        try:
            size = os.fstat(self.fd).st_size
            pending = sum(os.fstat(fd).st_size for fd, _ in self._successors)
        except OSError:
            return 0
        return max(size - self._read_pos, 0) + pending

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
            fd = open_checked(self.path, os.O_RDONLY)
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
        assert self.fd is not None
        data = os.pread(self.fd, CHUNK_BYTES, self._read_pos)
        if not data:
            return False
        self._read_pos += len(data)
        self._take(data)
        self._update_fingerprint()
        return True

    def _retire(self, out: Emitted, remember: bool) -> None:
        self._finish(out)
        if remember:
            self._expect = Expect(
                self._read_pos, self._dev, self._ino, self._fp, self._fp_len, False
            )
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
