import errno
import os
from pathlib import Path

import pytest

from broker.errors import StorageError
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.log.segment import BatchPosition, Segment

from .helpers import make_batch


def fill(segment: Segment, count: int, start: int = 0) -> list[bytes]:
    written = []
    for i in range(count):
        data = bytearray(make_batch([b"v%d" % i], timestamp=100 + i))
        data[0:8] = (start + i).to_bytes(8, "big")
        segment.append(
            [data], len(data), [BatchPosition(start + i, start + i, 0, len(data), 100 + i)]
        )
        written.append(bytes(data))
    return written


def test_append_scan_find_and_read(tmp_path: Path) -> None:
    segment = Segment(tmp_path, 10, index_interval=1, index_max=1 << 10)
    written = fill(segment, 5, start=10)
    assert segment.next_offset == 15 and segment.size == sum(map(len, written))
    assert [b.base_offset for b in segment.scan()] == [10, 11, 12, 13, 14]
    assert len(segment.offset_index) == 4  # the first batch needs no entry: position 0
    pos = segment.find_position(13)
    assert segment.read(pos, pos + len(written[3])) == written[3]
    assert segment.find_position(99) == segment.size
    assert segment.max_timestamp == 104 and segment.first_timestamp == 100
    end = segment.boundary_at_or_before(pos + len(written[3]) + 5, pos, segment.size)
    assert end == pos + len(written[3])


def test_truncate_to_recomputes_state(tmp_path: Path) -> None:
    segment = Segment(tmp_path, 0, index_interval=1, index_max=1 << 10)
    written = fill(segment, 5)
    segment.truncate_to(3)
    assert segment.next_offset == 3
    assert segment.size == sum(map(len, written[:3]))
    assert segment.max_timestamp == 102
    assert os.path.getsize(segment.path) == segment.size


def test_disk_full_leaves_nothing_partial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plog = PartitionLog.open(tmp_path / "t-0", "t", 0, LogConfig())
    plog.append(make_batch([b"ok"]))
    size = plog.size_bytes()
    real_write = os.write

    def short_writev(fd: int, buffers: list[bytes]) -> int:
        data = b"".join(buffers)
        return real_write(fd, data[: len(data) // 2])  # the disk filled up mid-write...

    def enospc(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")  # ...and stays full

    monkeypatch.setattr(os, "writev", short_writev)
    monkeypatch.setattr(os, "write", enospc)
    with pytest.raises(StorageError, match=r"disk full.*Free space"):
        plog.append(make_batch([b"x" * 100]))
    monkeypatch.undo()
    assert plog.size_bytes() == size == os.path.getsize(plog.segments()[0].path)
    assert plog.log_end_offset == 1
    assert plog.append(make_batch([b"next"])).first_offset == 1
