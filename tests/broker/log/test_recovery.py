import os
from pathlib import Path

from broker.log import files
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog

from .helpers import make_batch

CONFIG = LogConfig(segment_bytes=1000, index_interval_bytes=100, retention_ms=-1)


def build(tmp_path: Path, count: int = 30) -> tuple[Path, bytes]:
    plog = PartitionLog.open(tmp_path / "r-0", "r", 0, CONFIG)
    for i in range(count):
        plog.append(make_batch([b"value-%d" % i] * 3, timestamp=1000 + i))
    data = b"".join(bytes(c) for s in plog.segments() for c in [s.read(0, s.size)])
    plog.close()
    return tmp_path / "r-0", data


def snapshot(plog: PartitionLog) -> bytes:
    return b"".join(s.read(0, s.size) for s in plog.segments())


def test_clean_reopen_changes_nothing(tmp_path: Path) -> None:
    directory, data = build(tmp_path)
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    plog = PartitionLog.open(directory, "r", 0, CONFIG)
    assert snapshot(plog) == data
    plog.close()
    after = {p.name: p.read_bytes() for p in directory.iterdir()}
    assert before == after


def test_corrupt_crc_in_tail_is_truncated(tmp_path: Path) -> None:
    directory, _ = build(tmp_path)
    active = files.log_file(directory, files.segment_base_offsets(directory)[-1])
    good_size = active.stat().st_size
    batch = bytearray(make_batch([b"late"]))
    batch[-1] ^= 1
    with open(active, "ab") as fh:
        fh.write(batch)
    plog = PartitionLog.open(directory, "r", 0, CONFIG)
    assert active.stat().st_size == good_size
    assert plog.log_end_offset == 90


def test_damaged_and_stale_indexes_are_rebuilt(tmp_path: Path) -> None:
    directory, data = build(tmp_path)
    bases = files.segment_base_offsets(directory)
    reference = PartitionLog.open(directory, "r", 0, CONFIG)
    want = [s.offset_index.entries() for s in reference.segments()]
    want_ts = reference.offset_for_timestamp(1015)
    reference.close()
    files.index_file(directory, bases[0]).write_bytes(b"garbage")
    files.index_file(directory, bases[1]).write_bytes(bytes.fromhex("00000001 00000003"))
    files.time_index_file(directory, bases[-1]).unlink()
    plog = PartitionLog.open(directory, "r", 0, CONFIG)
    assert [s.offset_index.entries() for s in plog.segments()] == want
    assert plog.offset_for_timestamp(1015) == want_ts
    assert snapshot(plog) == data


def test_index_entries_past_end_are_dropped(tmp_path: Path) -> None:
    directory, _ = build(tmp_path)
    active = files.log_file(directory, files.segment_base_offsets(directory)[-1])
    os.truncate(active, 0)  # e.g. the data never reached the disk but the index did
    plog = PartitionLog.open(directory, "r", 0, CONFIG)
    assert plog.segments()[-1].size == 0
    assert len(plog.segments()[-1].offset_index) == 0
    assert plog.append(make_batch([b"x"])).first_offset == plog.segments()[-1].base_offset


def test_interrupted_compaction_swap_is_finished(tmp_path: Path) -> None:
    directory, _ = build(tmp_path)
    base = files.segment_base_offsets(directory)[0]
    log_path = files.log_file(directory, base)
    replacement = log_path.read_bytes()  # any complete segment will do
    files.with_suffix(log_path, files.SWAP_SUFFIX).write_bytes(replacement)
    (directory / files.CLEANER_BUILD_DIR).mkdir()
    (directory / files.CLEANER_BUILD_DIR / "junk.log").write_bytes(b"x")
    (directory / (files.filename_prefix(999999) + ".index")).write_bytes(b"")
    plog = PartitionLog.open(directory, "r", 0, CONFIG)
    names = {p.name for p in directory.iterdir()}
    assert not any(n.endswith(".swap") for n in names)
    assert files.CLEANER_BUILD_DIR not in names
    assert files.filename_prefix(999999) + ".index" not in names
    assert plog.log_end_offset == 90


def test_unflushed_data_is_fully_checked_after_a_crash(tmp_path: Path) -> None:
    config = LogConfig(segment_bytes=1000, index_interval_bytes=100, retention_ms=-1)
    plog = PartitionLog.open(tmp_path / "u-0", "u", 0, config)
    for i in range(10):
        plog.append(make_batch([b"flushed-%d" % i] * 3))
    plog.flush()
    flushed_end = plog.log_end_offset
    for i in range(40):
        plog.append(make_batch([b"unflushed-%d" % i] * 3))
    segment = next(s for s in plog.segments() if s.base_offset >= flushed_end)
    victim = list(segment.scan())[1]  # well before that segment's last index entry
    assert victim.position < segment.offset_index.last()[1]  # type: ignore[index]
    with open(segment.path, "r+b") as fh:  # a page that never reached the disk
        fh.seek(victim.position + 70)
        fh.write(b"\0" * 10)
    later = [s.base_offset for s in plog.segments() if s.base_offset > segment.base_offset]
    del plog  # crash: no close, no final flush
    plog = PartitionLog.open(tmp_path / "u-0", "u", 0, config)
    assert plog.log_end_offset == victim.base_offset
    assert later and all(s.base_offset not in later for s in plog.segments())
    assert plog.read(0, 1 << 20).size > 0
    assert plog.append(make_batch([b"again"])).first_offset == victim.base_offset


def test_recovery_point_follows_flush_and_truncation(tmp_path: Path) -> None:
    plog = PartitionLog.open(tmp_path / "v-0", "v", 0, CONFIG)
    for i in range(5):
        plog.append(make_batch([b"%d" % i]))
    plog.flush()
    point = tmp_path / "v-0" / files.RECOVERY_POINT_FILE
    assert point.read_text().strip() == "5"
    plog.truncate_to(2)
    assert point.read_text().strip() == "2"
    plog.close()
