from pathlib import Path

import pytest

from broker.log._index import IndexCorruptError
from broker.log.offset_index import OffsetIndex


def test_lookup_floor_and_default(tmp_path: Path) -> None:
    index = OffsetIndex(tmp_path / "x.index", 1 << 10, base_offset=100)
    assert index.lookup(150) == (100, 0)
    index.append(110, 400)
    index.append(120, 900)
    index.append(120, 950)  # not advancing: ignored
    assert index.lookup(109) == (100, 0)
    assert index.lookup(110) == (110, 400)
    assert index.lookup(119) == (110, 400)
    assert index.lookup(10**9) == (120, 900)
    assert index.position_floor(899) == 400


def test_file_round_trip_is_big_endian_relative(tmp_path: Path) -> None:
    path = tmp_path / "x.index"
    index = OffsetIndex(path, 1 << 10, base_offset=100)
    index.append(101, 7)
    index.close()
    assert path.read_bytes() == bytes.fromhex("00000001 00000007")
    assert OffsetIndex.load(path, 1 << 10, 100).entries() == [(101, 7)]


def test_truncate_and_full(tmp_path: Path) -> None:
    index = OffsetIndex(tmp_path / "x.index", 16, base_offset=0)
    index.append(1, 10)
    assert not index.is_full
    index.append(2, 20)
    assert index.is_full
    index.truncate_to_position(20)
    assert index.entries() == [(1, 10)]
    assert (tmp_path / "x.index").stat().st_size == 8


def test_malformed_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "x.index"
    path.write_bytes(b"\x00" * 7)
    with pytest.raises(IndexCorruptError):
        OffsetIndex.load(path, 1 << 10)
    path.write_bytes(bytes.fromhex("00000002 00000010 00000001 00000020"))
    with pytest.raises(IndexCorruptError, match="ascending"):
        OffsetIndex.load(path, 1 << 10)
