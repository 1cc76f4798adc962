"""How the source tells one file from another: inode, device and a content fingerprint.

A path is not an identity: rotation puts a new file at the same path, and inodes are reused
after a delete. A committed offset therefore names the inode/device it was read from and a
CRC-32 of the file's first bytes (``fingerprint_bytes`` of them, up to 256); a file counts as
the same only if all three match. These helpers are pure functions of the file system so the
rules can be read in one place.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Mapping
from typing import Any, NamedTuple

from hub.api.paths import open_checked

FINGERPRINT_BYTES = 256  # how much of a file's start identifies it


class Expect(NamedTuple):
    """Where to resume when a path is next opened (a committed or remembered offset)."""

    position: int
    device: int | None
    inode: int | None
    fingerprint: str | None
    fingerprint_bytes: int
    committed: bool  # from a committed offset (else remembered after draining the file)
    pending: tuple[tuple[int, int], ...] = ()  # (device, inode) of newer files to read next

    @classmethod
    def from_offset(cls, offset: Mapping[str, Any]) -> Expect:
        """From a committed source offset; a Kafka Connect one carries only ``position``."""
        return cls(
            int(offset["position"]),
            offset.get("device"),
            offset.get("inode"),
            offset.get("fingerprint"),
            int(offset.get("fingerprint_bytes") or 0),
            True,
            tuple((int(d), int(i)) for d, i in offset.get("pending") or ()),
        )


def regular_stat(path: str) -> os.stat_result | None:
    """``os.stat`` of a regular file; None if missing or not a regular file (FIFO, dir)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return st if (st.st_mode & 0o170000) == 0o100000 else None


def crc(data: bytes) -> str:
    return f"{zlib.crc32(data):08x}"


def fingerprint_ok(fd: int, exp: Expect) -> bool:
    """The open file starts with the bytes ``exp`` was read from (or ``exp`` has no print)."""
    if not exp.fingerprint or not exp.fingerprint_bytes:
        return True
    return crc(os.pread(fd, exp.fingerprint_bytes, 0)) == exp.fingerprint


def find_by_inode(path: str, device: int, inode: int) -> tuple[int, os.stat_result, str] | None:
    """Opens the regular file in ``path``'s directory with this inode (a rotated-away file
    keeps its inode under its new name, e.g. app.log.1)."""
    try:
        entries = list(os.scandir(os.path.dirname(path) or "."))
    except OSError:
        return None
    for entry in entries:
        try:
            if entry.inode() != inode or not entry.is_file():
                continue
            fd = open_checked(entry.path, os.O_RDONLY)  # a symlink out of the roots: skipped
        except OSError:
            continue
        fst = os.fstat(fd)
        if fst.st_dev == device and fst.st_ino == inode:
            return fd, fst, entry.path
        os.close(fd)
    return None


def find_predecessor(path: str, exp: Expect) -> tuple[int, os.stat_result, str, int] | None:
    """Opens ``exp``'s inode beside ``path`` and says where to resume in it: at
    ``exp.position`` if it still starts with the bytes read, else at 0 (it was truncated
    and refilled before it was rotated away)."""
    if exp.inode is None or exp.device is None:
        return None
    found = find_by_inode(path, exp.device, exp.inode)
    if found is None:
        return None
    fd, fst, where = found
    ok = fst.st_size >= exp.position and fingerprint_ok(fd, exp)
    return fd, fst, where, exp.position if ok else 0


def line_start_before(fd: int, size: int) -> int:
    """Start of the line containing byte ``size`` (so read.from=end never emits a fragment)."""
    window = min(size, 64 * 1024)
    data = os.pread(fd, window, size - window)
    cut = data.rfind(b"\n")
    if cut >= 0:
        return size - window + cut + 1
    return 0 if window == size else size
