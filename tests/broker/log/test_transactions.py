"""Transactions in one partition log: LSO, markers, the aborted-transaction index, recovery,
replication and compaction (broker/log/_txn.py, producer_state.py, txn_index.py,
_cleaner_txn.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.errors import (
    InvalidProducerEpochError,
    InvalidRecordError,
    TransactionCoordinatorFencedError,
)
from broker.log import files
from broker.log.cleaner import LogCleaner
from broker.log.config import LogConfig
from broker.log.markers import build_marker, read_marker
from broker.log.partition_log import PartitionLog
from broker.log.records import Record, build_batch, decode_batches
from broker.log.txn_index import ENTRY_SIZE, AbortedTxn

DAY = 86_400_000


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def txn_batch(
    values: list[bytes], pid: int, seq: int, epoch: int = 0, keys: list[bytes] | None = None,
    ts: int = 1_000,
) -> bytes:  # fmt: skip
    keys = keys or [None] * len(values)  # type: ignore[list-item]
    records = [Record(i, ts, k, v) for i, (k, v) in enumerate(zip(keys, values, strict=True))]
    return build_batch(
        records, base_offset=0, producer_id=pid, producer_epoch=epoch, base_sequence=seq,
        is_transactional=True,
    )  # fmt: skip


def plain(values: list[bytes], keys: list[bytes] | None = None, ts: int = 1_000) -> bytes:
    keys = keys or [None] * len(values)  # type: ignore[list-item]
    records = [Record(i, ts, k, v) for i, (k, v) in enumerate(zip(keys, values, strict=True))]
    return build_batch(records, base_offset=0)


def open_log(path: Path, clock: Clock | None = None, **cfg: object) -> PartitionLog:
    return PartitionLog.open(
        path / "t-0", "t", 0, LogConfig(**cfg),  # type: ignore[arg-type]
        clock=clock or Clock(1_000),
    )  # fmt: skip


def records_of(plog: PartitionLog) -> list[tuple[int, bytes | None, bool, bool]]:
    """(offset, value, transactional, control) of every record from the log start."""
    out = []
    offset = plog.log_start_offset
    while offset < plog.log_end_offset:
        result = plog.read(offset, 1 << 20)
        if not result.size:
            break
        for chunk in result.chunks:
            for b in decode_batches(chunk):
                out += [(r.offset, r.value, b.is_transactional, b.is_control) for r in b.records]
                offset = b.last_offset + 1
    return out


def test_marker_round_trip() -> None:
    data = build_marker(42, 3, commit=True, coordinator_epoch=7, timestamp=99)
    batch = next(decode_batches(data))
    assert batch.is_control and batch.is_transactional
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (42, 3, -1)
    assert batch.records[0].key == b"\x00\x00\x00\x01"  # version 0, COMMIT
    assert batch.records[0].value == b"\x00\x00\x00\x00\x00\x07"  # version 0, coordinator epoch
    assert read_marker(data) == (True, 7)
    assert read_marker(build_marker(1, 0, False, 0, 5)) == (False, 0)


def test_open_transaction_holds_the_lso_until_its_commit(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(plain([b"before"]))
    plog.append(txn_batch([b"a", b"b"], pid=5, seq=0))
    plog.append(plain([b"after"]))
    assert plog.high_watermark == 4
    assert plog.last_stable_offset == 1
    marker = plog.append_marker(5, 0, commit=True, coordinator_epoch=0)
    assert marker == 4
    assert plog.last_stable_offset == plog.high_watermark == 5
    assert plog.aborted_transactions(0, 5) == []
    assert not files.txn_index_file(plog.directory, 0).exists()


def test_abort_is_indexed_with_kafkas_entry_layout(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(txn_batch([b"a"], pid=5, seq=0))  # offset 0
    plog.append(txn_batch([b"x"], pid=6, seq=0))  # offset 1: still open after 5 aborts
    plog.append(txn_batch([b"b"], pid=5, seq=1))  # offset 2
    plog.append_marker(5, 0, commit=False, coordinator_epoch=0)  # offset 3
    assert plog.last_stable_offset == 1
    assert plog.aborted_transactions(0, 4) == [AbortedTxn(5, 0, 3, 1)]
    raw = files.txn_index_file(plog.directory, 0).read_bytes()
    assert len(raw) == ENTRY_SIZE == 34
    assert raw == (b"\x00\x00" + (5).to_bytes(8, "big") + (0).to_bytes(8, "big")
                   + (3).to_bytes(8, "big") + (1).to_bytes(8, "big"))  # fmt: skip
    plog.append_marker(6, 0, commit=True, coordinator_epoch=0)
    assert plog.last_stable_offset == 5
    assert plog.aborted_transactions(4, 5) == []  # the range after the abort
    assert plog.aborted_transactions(3, 5) == [AbortedTxn(5, 0, 3, 1)]


def test_clients_cannot_write_markers_and_fenced_markers_write_nothing(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    with pytest.raises(InvalidRecordError, match="control"):
        plog.append(build_marker(1, 0, True, 0, 5))
    plog.append(txn_batch([b"a"], pid=1, seq=0, epoch=2))
    plog.append_marker(1, 2, commit=False, coordinator_epoch=4)
    with pytest.raises(InvalidProducerEpochError):
        plog.append_marker(1, 1, commit=True, coordinator_epoch=4)
    with pytest.raises(TransactionCoordinatorFencedError):
        plog.append_marker(1, 2, commit=True, coordinator_epoch=3)
    with pytest.raises(InvalidProducerEpochError):  # a zombie's transactional data
        plog.append(txn_batch([b"z"], pid=1, seq=1, epoch=1))
    assert plog.log_end_offset == 2


def test_marker_with_a_bumped_epoch_fences_the_old_epoch(tmp_path: Path) -> None:
    """A transaction timeout aborts with epoch + 1; the old producer's next batch is refused
    and the new epoch starts at sequence 0."""
    plog = open_log(tmp_path)
    plog.append(txn_batch([b"a"], pid=9, seq=0, epoch=0))
    plog.append_marker(9, 1, commit=False, coordinator_epoch=0)
    with pytest.raises(InvalidProducerEpochError):
        plog.append(txn_batch([b"late"], pid=9, seq=1, epoch=0))
    assert plog.append(txn_batch([b"new"], pid=9, seq=0, epoch=2)).first_offset == 2


def test_open_transactions_and_aborts_survive_clean_reopen_and_crash(tmp_path: Path) -> None:
    plog = open_log(tmp_path, segment_bytes=300)
    for i in range(6):
        plog.append(txn_batch([b"a%d" % i], pid=1, seq=i))
        plog.append(txn_batch([b"b%d" % i], pid=2, seq=i))
    plog.append_marker(1, 0, commit=False, coordinator_epoch=0)
    state = (plog.last_stable_offset, plog.aborted_transactions(0, plog.log_end_offset))
    assert state[0] == 1 and len(state[1]) == 1
    assert len(plog.segments()) > 2
    plog.close()
    again = open_log(tmp_path, segment_bytes=300)
    assert (again.last_stable_offset, again.aborted_transactions(0, again.log_end_offset)) == state
    again.close()
    # A crash after the last snapshot: the snapshot is older and the newest segment's index
    # entries were never written; replay rebuilds both.
    (tmp_path / "t-0" / files.PRODUCER_STATE_FILE).unlink()
    for path in (tmp_path / "t-0").glob("*.txnindex"):
        path.unlink()
    crashed = open_log(tmp_path, segment_bytes=300)
    assert crashed.last_stable_offset == state[0]
    assert crashed.aborted_transactions(0, crashed.log_end_offset) == state[1]
    crashed.append_marker(2, 0, commit=True, coordinator_epoch=0)
    assert crashed.last_stable_offset == crashed.high_watermark


def test_truncation_drops_index_entries_and_reopens_the_transaction(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(txn_batch([b"a"], pid=1, seq=0))
    marker = plog.append_marker(1, 0, commit=False, coordinator_epoch=0)
    assert plog.aborted_transactions(0, 2)
    plog.truncate_to(marker)
    assert plog.aborted_transactions(0, 2) == []
    assert plog.last_stable_offset == 0  # open again: its marker is gone


def test_a_follower_builds_the_same_state_from_replicated_bytes(tmp_path: Path) -> None:
    leader = open_log(tmp_path / "l")
    follower = open_log(tmp_path / "f")
    leader.append(txn_batch([b"a"], pid=3, seq=0))
    leader.append(txn_batch([b"b"], pid=4, seq=0))
    leader.append_marker(3, 0, commit=False, coordinator_epoch=2)
    follower.append_as_follower(b"".join(bytes(c) for c in leader.read(0, 1 << 20).chunks))
    follower.set_high_watermark(follower.log_end_offset)
    assert follower.aborted_transactions(0, 3) == leader.aborted_transactions(0, 3)
    assert follower.last_stable_offset == leader.last_stable_offset == 1
    with pytest.raises(TransactionCoordinatorFencedError):
        follower.append_marker(3, 0, commit=True, coordinator_epoch=1)


def test_unreplicated_markers_keep_the_transaction_unstable(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.hw_follows_leo = False
    plog.append(txn_batch([b"a"], pid=1, seq=0))
    plog.append_marker(1, 0, commit=True, coordinator_epoch=0)
    plog.set_high_watermark(1)  # the data is replicated, the marker not yet
    assert plog.last_stable_offset == 0
    plog.set_high_watermark(2)
    assert plog.last_stable_offset == 2


def compacted(path: Path, clock: Clock, **cfg: object) -> PartitionLog:
    config = LogConfig(cleanup_policy="compact", segment_bytes=300, retention_ms=-1, **cfg)
    return PartitionLog.open(path / "c-0", "c", 0, config, clock=clock)


def test_cleaner_removes_aborted_records_and_later_their_marker(tmp_path: Path) -> None:
    clock = Clock(10 * DAY)
    plog = compacted(tmp_path, clock, delete_retention_ms=DAY)
    ts = clock.now
    plog.append(txn_batch([b"committed"], pid=1, seq=0, keys=[b"k1"], ts=ts))
    plog.append(txn_batch([b"aborted"], pid=2, seq=0, keys=[b"k2"], ts=ts))
    plog.append(txn_batch([b"aborted-newer"], pid=2, seq=1, keys=[b"k1"], ts=ts))
    plog.append_marker(2, 0, commit=False, coordinator_epoch=0)
    plog.append_marker(1, 0, commit=True, coordinator_epoch=0)
    for i in range(8):  # push everything above into closed segments
        plog.append(plain([b"filler%d" % i], keys=[b"f%d" % i], ts=ts))
    cleaner = LogCleaner(clock)
    cleaner.clean(plog, force=True)
    left = records_of(plog)
    values = [v for _, v, _, control in left if not control]
    # the aborted value never wins k1; the aborted batches are gone except producer 2's
    # last one, kept for its sequence state (read_committed still skips it)
    assert b"committed" in values and b"aborted" not in values
    markers = [o for o, _, _, control in left if control]
    assert len(markers) == 2
    # a day later: producer 2's retained batch keeps its marker and index entry
    clock.now += 2 * DAY
    cleaner.clean(plog, force=True)
    # (LSO 0: producer 1 was still open when producer 2 aborted)
    assert plog.aborted_transactions(0, plog.log_end_offset) == [AbortedTxn(2, 1, 3, 0)]
    plog.close()
    reopened = compacted(tmp_path, clock, delete_retention_ms=DAY)
    assert reopened.last_stable_offset == reopened.high_watermark


def test_cleaner_drops_a_marker_with_no_data_left_together_with_its_index_entry(
    tmp_path: Path,
) -> None:
    clock = Clock(10 * DAY)
    plog = compacted(tmp_path, clock, delete_retention_ms=DAY)
    ts = clock.now
    plog.append(txn_batch([b"x"], pid=7, seq=0, keys=[b"k"], ts=ts))
    plog.append_marker(7, 0, commit=False, coordinator_epoch=0)
    plog.append(txn_batch([b"y"], pid=7, seq=1, keys=[b"k"], ts=ts))  # a later txn, committed
    plog.append_marker(7, 0, commit=True, coordinator_epoch=0)
    plog.append(txn_batch([b"z"], pid=7, seq=2, keys=[b"k"], ts=ts))  # newest value of k
    plog.append_marker(7, 0, commit=True, coordinator_epoch=0)
    for i in range(8):
        plog.append(plain([b"filler%d" % i], keys=[b"f%d" % i], ts=ts))
    cleaner = LogCleaner(clock)
    clock.now += 2 * DAY
    cleaner.clean(plog, force=True)
    left = records_of(plog)
    assert [v for o, v, _, c in left if not c and o < 6] == [b"z"]
    assert [o for o, _, _, c in left if c] == [5]  # only the marker whose data remains
    assert plog.aborted_transactions(0, plog.log_end_offset) == []


def test_cleaner_never_cleans_an_open_transaction(tmp_path: Path) -> None:
    clock = Clock(10 * DAY)
    plog = compacted(tmp_path, clock)
    ts = clock.now
    plog.append(txn_batch([b"open"], pid=1, seq=0, keys=[b"k"], ts=ts))
    for i in range(8):
        plog.append(plain([b"v%d" % i], keys=[b"k"], ts=ts))
    assert LogCleaner(clock).clean(plog, force=True) == 0
    assert plog.last_stable_offset == 0
    assert records_of(plog)[0][1] == b"open"
