from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.log.cleaner import LogCleaner
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog
from broker.log.records import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    decode_batches,
)

from .helpers import make_batch

DAY = 86_400_000


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def compacted_log(path: Path, clock: Clock, **cfg: object) -> PartitionLog:
    config = LogConfig(cleanup_policy="compact", segment_bytes=400, retention_ms=-1, **cfg)
    # (kafka-python stores a batch uncompressed when compression would not shrink it, so
    # compressed tests use compressible values)  # type: ignore[arg-type]
    return PartitionLog.open(path / "c-0", "c", 0, config, clock=clock)


def contents(plog: PartitionLog) -> list[tuple[int, bytes | None, bytes | None]]:
    out = []
    offset = plog.log_start_offset
    while offset < plog.log_end_offset:
        result = plog.read(offset, 1 << 20)
        if not result.size:
            break
        for chunk in result.chunks:
            for batch in decode_batches(chunk):
                out.extend((r.offset, r.key, r.value) for r in batch.records)
                offset = batch.last_offset + 1
    return out


def produce(
    plog: PartitionLog, pairs: list[tuple[bytes, bytes | None]], ts: int, codec: int = CODEC_NONE
) -> None:
    for key, value in pairs:
        plog.append(make_batch([value], keys=[key], timestamp=ts, compression=codec))


def test_keeps_latest_value_per_key_and_preserves_offsets(tmp_path: Path) -> None:
    clock = Clock(10 * DAY)
    plog = compacted_log(tmp_path, clock)
    writes = [(b"k%d" % (i % 3), b"v%d" % i) for i in range(30)]
    produce(plog, writes, ts=clock.now)
    before = contents(plog)
    active_start = plog.segments()[-1].base_offset
    assert LogCleaner(clock).clean(plog, force=True) > 0
    after = contents(plog)
    expected_closed = {}
    for offset, key, value in before:
        if offset < active_start:
            expected_closed[key] = (offset, key, value)
    kept_closed = [r for r in after if r[0] < active_start]
    assert sorted(kept_closed) == sorted(expected_closed.values())
    assert [r for r in after if r[0] >= active_start] == [r for r in before if r[0] >= active_start]
    # every surviving record kept its offset, and values are the newest for the range
    assert set(after) <= set(before)
    assert plog.log_end_offset == 30


def test_reads_in_compacted_gaps_return_next_batch(tmp_path: Path) -> None:
    clock = Clock(10 * DAY)
    plog = compacted_log(tmp_path, clock)
    produce(plog, [(b"a", b"1")] * 20 + [(b"b", b"2")], ts=clock.now)
    LogCleaner(clock).clean(plog, force=True)
    first = contents(plog)[0][0]
    result = plog.read(0, 1 << 20)
    assert next(decode_batches(bytes(result.chunks[0]))).records[0].offset == first


def test_tombstones_expire_after_delete_retention(tmp_path: Path) -> None:
    clock = Clock(10 * DAY)
    plog = compacted_log(tmp_path, clock, delete_retention_ms=1_000)
    produce(plog, [(b"gone", b"x"), (b"keep", b"y"), (b"gone", None)], ts=clock.now)
    produce(plog, [(b"pad", b"p" * 50)] * 6, ts=clock.now)  # push them into closed segments
    cleaner = LogCleaner(clock)
    cleaner.clean(plog, force=True)
    kv = {k: v for _, k, v in contents(plog)}
    assert kv[b"gone"] is None and kv[b"keep"] == b"y"  # tombstone still visible
    clock.now += 500
    assert cleaner.clean(plog) == 0  # nothing dirty, tombstone not yet expired
    clock.now += 1_000
    cleaner.clean(plog)  # the expired tombstone alone makes the pass due
    keys = [k for _, k, _ in contents(plog)]
    assert b"gone" not in keys and b"keep" in keys


def test_min_compaction_lag_protects_recent_segments(tmp_path: Path) -> None:
    clock = Clock(10 * DAY)
    plog = compacted_log(tmp_path, clock, min_compaction_lag_ms=DAY)
    produce(plog, [(b"a", b"%d" % i) for i in range(20)], ts=clock.now)
    assert LogCleaner(clock).clean(plog, force=True) == 0
    clock.now += 2 * DAY
    assert LogCleaner(clock).clean(plog, force=True) > 0


@pytest.mark.parametrize("codec", [CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD])
def test_compressed_batches_are_decompressed_and_rebuilt(tmp_path: Path, codec: int) -> None:
    clock = Clock(10 * DAY)
    plog = compacted_log(tmp_path, clock)
    for i in range(12):
        keys = [b"k1", b"k2", b"k%d" % (i + 10)]
        values = [b"a%d" % i + b"a" * 200, b"b%d" % i + b"b" * 200, b"c" * 200]
        plog.append(make_batch(values, keys=keys, timestamp=clock.now, compression=codec))
    LogCleaner(clock).clean(plog, force=True)
    active_start = plog.segments()[-1].base_offset
    rebuilt = 0
    for segment in plog.segments()[:-1]:
        raw = segment.read(0, segment.size)
        for batch in decode_batches(raw):
            assert batch.compression == codec
            rebuilt += len(batch.records) < 3
    assert rebuilt
    closed = [r for r in contents(plog) if r[0] < active_start]
    keys = [k for _, k, _ in closed]
    assert len(keys) == len(set(keys))  # one survivor per key in the cleaned range


def test_compaction_survives_reopen(tmp_path: Path) -> None:
    clock = Clock(10 * DAY)
    plog = compacted_log(tmp_path, clock)
    produce(plog, [(b"k%d" % (i % 2), b"v%d" % i) for i in range(20)], ts=clock.now)
    LogCleaner(clock).clean(plog, force=True)
    before = contents(plog)
    plog.close()
    plog = compacted_log(tmp_path, clock)
    assert contents(plog) == before
    assert not (plog.directory / "cleaning").exists()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    writes=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from([b"a", b"b", b"c", b"d"]), st.none() | st.binary(max_size=30)
            ),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=40,
    ),
    codec=st.sampled_from([CODEC_NONE, CODEC_GZIP]),
    tombstones_expired=st.booleans(),
)
def test_compaction_property(
    tmp_path_factory: pytest.TempPathFactory,
    writes: list[list[tuple[bytes, bytes | None]]],
    codec: int,
    tombstones_expired: bool,
) -> None:
    clock = Clock(10 * DAY)
    plog = compacted_log(tmp_path_factory.mktemp("prop"), clock, delete_retention_ms=1_000)
    for batch_records in writes:
        keys = [k for k, _ in batch_records]
        values = [v for _, v in batch_records]
        plog.append(make_batch(values, keys=keys, timestamp=clock.now, compression=codec))
    before = contents(plog)
    end = plog.log_end_offset
    cleaned_end = plog.segments()[-1].base_offset
    if tombstones_expired:
        clock.now += 5_000
    LogCleaner(clock).clean(plog, force=True)
    after = contents(plog)
    assert plog.log_end_offset == end
    assert set(after) <= set(before)  # nothing new, every survivor keeps its offset
    latest = {key: (offset, key, value) for offset, key, value in before}
    for key, record in latest.items():
        expired = tombstones_expired and record[2] is None and record[0] < cleaned_end
        assert (record in after) != expired, key
    cleaned_keys = [key for offset, key, _ in after if offset < cleaned_end]
    assert len(cleaned_keys) == len(set(cleaned_keys))
    assert [r for r in after if r[0] >= cleaned_end] == [r for r in before if r[0] >= cleaned_end]
    plog.close()


def test_idempotent_producer_state_survives_compaction_and_a_lost_snapshot(tmp_path: Path) -> None:
    clock = Clock(10 * DAY)
    plog = compacted_log(tmp_path, clock)
    for seq in range(20):
        plog.append(
            make_batch(
                [b"v%d" % seq, b"w%d" % seq],
                keys=[b"k", b"k"],
                timestamp=clock.now,
                producer_id=42,
                producer_epoch=0,
                base_sequence=seq * 2,
            )
        )
    plog.roll()  # everything closed: the producer's last batch is in the cleaned range
    assert LogCleaner(clock).clean(plog, force=True) > 0
    plog.close()
    (plog.directory / "producer-state.json").unlink()  # force a replay from batch headers
    plog = compacted_log(tmp_path, clock)
    retry = make_batch(
        [b"v19", b"w19"], keys=[b"k", b"k"], producer_id=42, producer_epoch=0, base_sequence=38
    )
    assert plog.append(retry).duplicate
    nxt = make_batch([b"x"], keys=[b"k"], producer_id=42, producer_epoch=0, base_sequence=40)
    assert plog.append(nxt).first_offset == 40
