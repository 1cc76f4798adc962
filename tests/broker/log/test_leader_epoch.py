"""LeaderEpochCache (KIP-101/279 lookups) and follower appends/truncation of PartitionLog."""

from __future__ import annotations

from pathlib import Path

from broker.log.config import LogConfig
from broker.log.leader_epoch import UNDEFINED_EPOCH, UNDEFINED_OFFSET, LeaderEpochCache
from broker.log.partition_log import PartitionLog
from broker.log.records import Record, build_batch


def test_end_offset_lookups(tmp_path: Path) -> None:
    cache = LeaderEpochCache(tmp_path / "leader-epoch-checkpoint")
    assert cache.end_offset_for(0, 10) == (UNDEFINED_EPOCH, UNDEFINED_OFFSET)
    cache.assign(1, 0)
    cache.assign(3, 100)
    cache.assign(5, 250)
    assert cache.end_offset_for(5, 300) == (5, 300)  # latest epoch ends at the log end
    assert cache.end_offset_for(3, 300) == (3, 250)
    assert cache.end_offset_for(4, 300) == (3, 250)  # largest epoch <= 4 is 3
    assert cache.end_offset_for(0, 300) == (0, 0)  # older than any: first start offset
    assert cache.end_offset_for(6, 300) == (UNDEFINED_EPOCH, UNDEFINED_OFFSET)
    assert [cache.epoch_for_offset(o) for o in (0, 99, 100, 249, 250, 999)] == [1, 1, 3, 3, 5, 5]
    reloaded = LeaderEpochCache(tmp_path / "leader-epoch-checkpoint")
    assert reloaded.entries == [(1, 0), (3, 100), (5, 250)]
    reloaded.truncate_from_end(120)
    assert reloaded.entries == [(1, 0), (3, 100)]
    reloaded.truncate_from_start(50)
    assert reloaded.entries == [(1, 50), (3, 100)]


def _batch(n: int, start: int = 0) -> bytes:
    return build_batch([Record(offset=i, timestamp=1000 + i, key=None, value=b"v%d" % (start + i))
                        for i in range(n)])  # fmt: skip


def test_follower_appends_leader_bytes_verbatim_and_truncates(tmp_path: Path) -> None:
    leader = PartitionLog.open(tmp_path / "l", "t", 0, LogConfig())
    follower = PartitionLog.open(tmp_path / "f", "t", 0, LogConfig())
    leader.append(_batch(3), leader_epoch=2)
    leader.append(_batch(2, 3), leader_epoch=4)
    data = b"".join(bytes(c) for c in leader.read(0, 1 << 20).chunks)
    assert follower.append_as_follower(data) == 5
    assert follower.append_as_follower(data) == 5  # a re-fetch of known batches is skipped
    assert b"".join(bytes(c) for c in follower.read(0, 1 << 20).chunks) == data
    assert follower.leader_epochs.entries == [(2, 0), (4, 3)]
    follower.truncate_replica_to(3)
    assert follower.log_end_offset == 3
    assert follower.leader_epochs.entries == [(2, 0)]
    follower.truncate_fully_and_start_at(40)
    assert (follower.log_start_offset, follower.log_end_offset) == (40, 40)
    leader.close()
    follower.close()


def test_high_watermark_checkpoint_round_trip(tmp_path: Path) -> None:
    from broker.log.checkpoints import read_checkpoint, write_checkpoint

    path = tmp_path / "replication-offset-checkpoint"
    assert read_checkpoint(path) == {}
    write_checkpoint(path, {("orders", 0): 1200, ("a-b-c", 3): 7})
    assert path.read_text().splitlines()[:2] == ["0", "2"]
    assert read_checkpoint(path) == {("orders", 0): 1200, ("a-b-c", 3): 7}
    path.write_text("0\n5\ngarbage")
    assert read_checkpoint(path) == {}  # unreadable: start from 0, never from a wrong value
