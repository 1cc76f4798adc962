"""The bounded segment descriptor cache: bounded, never reuses a closed fd, refuses swaps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker.log._handles import FileHandleCache, SegmentGoneError
from broker.log.segment import Segment

from .helpers import make_batch


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _segment(path: Path, base: int, cache: FileHandleCache) -> Segment:
    return Segment(path, base, index_interval=1, index_max=1 << 12, cache=cache)


def _append(segment: Segment, data: bytes) -> None:
    from broker.log.batch import read_header
    from broker.log.segment import BatchPosition

    header = read_header(data)
    segment.append(
        [data],
        len(data),
        [BatchPosition(segment.next_offset, segment.next_offset, 0, len(data), 1_000)],
    )
    assert header.size == len(data)


def test_many_segments_stay_within_the_capacity(tmp_path: Path) -> None:
    cache = FileHandleCache(16)
    before = _open_fds()
    segments = [_segment(tmp_path, i * 100, cache) for i in range(200)]
    for rounds in range(2):  # appends and reads reopen evicted files transparently
        for s in segments:
            _append(s, make_batch([b"round %d" % rounds]))
            assert cache.open_count <= 16
            assert _open_fds() - before <= 16
    for s in segments:
        assert s.read(0, s.size).count(b"round") == 2
    assert cache.evictions > 0


def test_a_descriptor_in_use_is_never_closed_under_its_user(tmp_path: Path) -> None:
    cache = FileHandleCache(16)
    first = _segment(tmp_path, 0, cache)
    _append(first, make_batch([b"first"]))
    fd = first.file.acquire()
    try:
        others = [_segment(tmp_path, (i + 1) * 100, cache) for i in range(64)]
        assert all(not s.file.is_open or cache.open_count <= 17 for s in others)
        assert first.file.is_open  # the one in use was skipped by eviction
        assert b"first" in os.pread(fd, 200, 0)
    finally:
        first.file.release()
    assert len(others) == 64
    others.append(_segment(tmp_path, 10_000, cache))
    assert cache.open_count <= 16


def test_a_retired_segment_is_read_while_open_and_never_reopened(tmp_path: Path) -> None:
    cache = FileHandleCache(16)
    held = _segment(tmp_path, 0, cache)
    _append(held, make_batch([b"kept"]))
    held.file.acquire()  # a reader in the middle of a read
    held.delete()
    assert b"kept" in held.read(0, held.size)  # the unlinked inode, through the open fd
    held.file.release()
    assert b"kept" in held.read(0, held.size)  # still open until the object goes

    cold = _segment(tmp_path, 100, cache)
    _append(cold, make_batch([b"cold"]))
    newer = [_segment(tmp_path, 1_000 + i, cache) for i in range(40)]  # push it out
    assert not cold.file.is_open and len(newer) == 40
    cold.delete()
    with pytest.raises(SegmentGoneError):
        cold.read(0, cold.size)


def test_a_path_that_names_another_file_is_refused(tmp_path: Path) -> None:
    cache = FileHandleCache(16)
    old = _segment(tmp_path, 0, cache)
    _append(old, make_batch([b"old"]))
    newer = [_segment(tmp_path, 1_000 + i, cache) for i in range(40)]
    assert not old.file.is_open and len(newer) == 40
    replacement = tmp_path / "replacement"
    replacement.write_bytes(make_batch([b"new"]))
    os.replace(replacement, old.path)  # what a swap does, without retiring (belt and braces)
    with pytest.raises(SegmentGoneError):
        old.read(0, old.size)


def test_closing_releases_the_descriptor(tmp_path: Path) -> None:
    cache = FileHandleCache(16)
    before = _open_fds()
    segment = _segment(tmp_path, 0, cache)
    assert _open_fds() == before + 1
    segment.close()
    assert _open_fds() == before
    del segment


def test_a_dropped_segment_gives_its_descriptor_back(tmp_path: Path) -> None:
    cache = FileHandleCache(16)
    before = _open_fds()
    segment = _segment(tmp_path, 0, cache)
    assert _open_fds() == before + 1
    del segment  # its finalizer discards the handle (never blocking on the cache lock)
    assert _open_fds() == before and cache.open_count == 0
