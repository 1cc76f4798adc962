import gc
from pathlib import Path

import pytest

from broker.errors import (
    CorruptRecordError,
    InvalidRecordError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
)
from broker.log.batch import read_header
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog

from .helpers import make_batch, values_of


class FakeClock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def open_log(path: Path, clock: FakeClock | None = None, **cfg: object) -> PartitionLog:
    return PartitionLog.open(path / "t-0", "t", 0, LogConfig(**cfg), clock=clock or FakeClock())  # type: ignore[arg-type]


def test_append_assigns_offsets_and_reads_back(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    a = plog.append(make_batch([b"a", b"b", b"c"]))
    b = plog.append(make_batch([b"d"]) + make_batch([b"e", b"f"]), leader_epoch=7)
    assert (a.first_offset, a.last_offset) == (0, 2)
    assert (b.first_offset, b.last_offset) == (3, 5)
    assert a.log_append_time == -1
    assert plog.log_end_offset == plog.high_watermark == 6
    result = plog.read(0, 1 << 20)
    assert values_of(result.chunks) == list(enumerate([b"a", b"b", b"c", b"d", b"e", b"f"]))
    data = b"".join(bytes(c) for c in result.chunks)
    assert result.size == len(data)
    assert read_header(data, len(make_batch([b"a", b"b", b"c"]))).leader_epoch == 7


def test_read_starts_with_batch_containing_offset(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(make_batch([b"a", b"b", b"c"]))
    plog.append(make_batch([b"d"]))
    assert [o for o, _ in values_of(plog.read(1, 1 << 20).chunks)] == [0, 1, 2, 3]
    assert [o for o, _ in values_of(plog.read(3, 1 << 20).chunks)] == [3]
    assert plog.read(4, 1 << 20).size == 0
    with pytest.raises(OffsetOutOfRangeError):
        plog.read(5, 100)


def test_read_respects_max_bytes_min_one_and_upper_bound(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    batch = make_batch([b"x" * 100])
    for _ in range(5):
        plog.append(batch)
    assert plog.read(0, len(batch) * 2 + 10).size == len(batch) * 2
    assert plog.read(0, 10).size == len(batch)  # min_one
    assert plog.read(0, 10, min_one=False).size == 0
    assert [o for o, _ in values_of(plog.read(1, 1 << 20, upper_bound=3).chunks)] == [1, 2]
    assert plog.read(3, 1 << 20, upper_bound=3).size == 0


def test_rolls_at_segment_bytes_and_reads_across_segments(tmp_path: Path) -> None:
    batch = make_batch([b"x" * 100])
    plog = open_log(tmp_path, segment_bytes=len(batch) * 3, index_interval_bytes=1)
    for _ in range(10):
        plog.append(batch)
    assert [s.base_offset for s in plog.segments()] == [0, 3, 6, 9]
    for offset in range(10):
        assert values_of(plog.read(offset, len(batch)).chunks)[0][0] == offset
    # one read never spans segments
    assert [o for o, _ in values_of(plog.read(0, 1 << 20).chunks)] == [0, 1, 2]


def test_rolls_at_segment_ms(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_ms=100)
    plog.append(make_batch([b"a"], timestamp=1000))
    plog.append(make_batch([b"b"], timestamp=1100))
    plog.append(make_batch([b"c"], timestamp=1101))
    assert [s.base_offset for s in plog.segments()] == [0, 2]


def test_reopen_keeps_everything(tmp_path: Path) -> None:
    batch = make_batch([b"v1", b"v2"])
    plog = open_log(tmp_path, segment_bytes=len(batch) * 2)
    for _ in range(5):
        plog.append(batch)
    before = plog.read(0, 1 << 20)
    plog.close()
    plog = open_log(tmp_path, segment_bytes=len(batch) * 2)
    assert plog.log_end_offset == 10
    assert len(plog.segments()) == 3
    assert plog.read(0, 1 << 20).chunks == before.chunks
    assert plog.append(batch).first_offset == 10


def test_rejects_corrupt_and_oversized_batches_without_writing(tmp_path: Path) -> None:
    plog = open_log(tmp_path, max_message_bytes=200)
    good = make_batch([b"a"])
    bad = bytearray(good)
    bad[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError):
        plog.append(good + bytes(bad))
    with pytest.raises(CorruptRecordError):
        plog.append(good[:-3])
    with pytest.raises(RecordTooLargeError):
        plog.append(make_batch([b"x" * 300]))
    with pytest.raises(InvalidRecordError):
        plog.append(b"")
    assert plog.log_end_offset == 0 and plog.size_bytes() == 0


def test_log_append_time_rewrites_max_timestamp_and_crc(tmp_path: Path) -> None:
    clock = FakeClock(123_456)
    plog = open_log(tmp_path, clock, message_timestamp_type="LogAppendTime")
    info = plog.append(make_batch([b"a"], timestamp=5))
    assert info.log_append_time == 123_456
    data = bytes(plog.read(0, 1 << 20).chunks[0])
    header = read_header(data)
    assert header.max_timestamp == 123_456 and header.attributes & 0x08
    assert values_of([data]) == [(0, b"a")]  # decodes => CRC valid
    assert plog.offset_for_timestamp(123_000) == (0, 123_456)


def test_offset_for_timestamp_and_max_timestamp(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_bytes=200, index_interval_bytes=1)
    for i, ts in enumerate([10, 20, 15, 40, 30]):
        plog.append(make_batch([b"v%d" % i], timestamp=ts))
    assert plog.offset_for_timestamp(0) == (0, 10)
    assert plog.offset_for_timestamp(16) == (1, 20)
    assert plog.offset_for_timestamp(31) == (3, 40)
    assert plog.offset_for_timestamp(41) is None
    assert plog.last_batch_max_timestamp() == (40, 3)


def test_truncate_to_and_continue(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_bytes=200)
    for i in range(6):
        plog.append(make_batch([b"v%d" % i]))
    plog.truncate_to(2)
    assert plog.log_end_offset == 2 and plog.high_watermark == 2
    assert plog.append(make_batch([b"new"])).first_offset == 2
    assert values_of(plog.read(2, 1 << 20).chunks) == [(2, b"new")]
    assert [o for o, _ in values_of(plog.read(0, 1 << 20).chunks)][:2] == [0, 1]


def test_retention_and_delete_records_move_log_start(tmp_path: Path) -> None:
    clock = FakeClock(10_000)
    batch = make_batch([b"x" * 50], timestamp=1_000)
    plog = open_log(tmp_path, clock, segment_bytes=len(batch) * 2, retention_ms=5_000)
    for _ in range(6):
        plog.append(batch)
    plog.append(make_batch([b"new"], timestamp=9_000))
    assert plog.delete_old_segments() == 3  # three full old segments; the active one stays
    assert plog.log_start_offset == 6
    with pytest.raises(OffsetOutOfRangeError):
        plog.read(0, 100)
    assert plog.delete_records_before(7) == 7
    with pytest.raises(OffsetOutOfRangeError):
        plog.delete_records_before(100)
    plog.close()
    assert open_log(tmp_path, clock).log_start_offset == 7


def test_retention_bytes(tmp_path: Path) -> None:
    batch = make_batch([b"x" * 50])
    plog = open_log(
        tmp_path, segment_bytes=len(batch), retention_bytes=len(batch) * 2, retention_ms=-1
    )
    for _ in range(5):
        plog.append(batch)
    plog.delete_old_segments()
    assert plog.size_bytes() == len(batch) * 2
    assert plog.log_start_offset == 3


def test_high_watermark_waits_for_flush_under_a_flush_messages_policy(tmp_path: Path) -> None:
    plog = open_log(tmp_path, flush_messages=2)
    plog.append(make_batch([b"a"]))
    assert plog.log_end_offset == 1 and plog.high_watermark == 0 and not plog.flush_due
    plog.append(make_batch([b"b"]))
    assert plog.flush_due
    plog.flush()
    assert plog.high_watermark == 2 and not plog.flush_due
    assert (plog.directory / "recovery-point").read_text().strip() == "2"


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
def test_reads_after_close_are_safe_and_descriptors_are_released(tmp_path: Path) -> None:
    before = len(list(Path("/proc/self/fd").iterdir()))
    for _ in range(20):
        plog = open_log(tmp_path, segment_bytes=200)
        for i in range(5):
            plog.append(make_batch([b"v%d" % i]))
        held = plog.segments()[0]  # as a reader in flight would
        plog.close()
        assert values_of([held.read(0, held.size)])  # its own file, not a recycled fd
        del plog, held
    gc.collect()
    assert len(list(Path("/proc/self/fd").iterdir())) <= before + 2


def _with_offset_delta(data: bytes, delta: int) -> bytes:
    from crc32c import crc32c

    out = bytearray(data)
    out[23:27] = delta.to_bytes(4, "big")
    out[17:21] = crc32c(bytes(out[21:])).to_bytes(4, "big")
    return bytes(out)


def test_rolls_before_relative_offsets_overflow_int32(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    huge = _with_offset_delta(make_batch([b"x"]), 2**31 - 10)
    plog.append(huge)
    plog.append(make_batch([b"y"]))
    assert len(plog.segments()) == 1
    info = plog.append(huge)  # its last offset would be > 2**31 - 1 past the segment base
    assert [s.base_offset for s in plog.segments()] == [0, info.first_offset]
    assert plog.read(info.first_offset, 1 << 20).size == len(huge)
