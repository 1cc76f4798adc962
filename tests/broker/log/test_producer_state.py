from pathlib import Path

import pytest

from broker.errors import InvalidProducerEpochError, OutOfOrderSequenceError
from broker.log.config import LogConfig
from broker.log.partition_log import PartitionLog

from .helpers import make_batch


def idem(values: list[bytes], seq: int, pid: int = 7, epoch: int = 0) -> bytes:
    return make_batch(values, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def open_log(path: Path, **cfg: object) -> PartitionLog:
    return PartitionLog.open(path / "p-0", "p", 0, LogConfig(**cfg))  # type: ignore[arg-type]


def test_duplicate_returns_original_offsets_and_writes_nothing(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    first = plog.append(idem([b"a", b"b"], seq=0))
    plog.append(idem([b"c"], seq=2))
    size = plog.size_bytes()
    again = plog.append(idem([b"a", b"b"], seq=0))
    assert again.duplicate
    assert (again.first_offset, again.last_offset) == (first.first_offset, first.last_offset)
    assert plog.size_bytes() == size and plog.log_end_offset == 3


def test_only_last_five_batches_are_remembered(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    for seq in range(6):
        plog.append(idem([b"x"], seq=seq))
    assert plog.append(idem([b"x"], seq=1)).duplicate
    with pytest.raises(OutOfOrderSequenceError):
        plog.append(idem([b"x"], seq=0))  # fell out of the window: not a known duplicate


def test_sequence_gap_is_out_of_order(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(idem([b"a"], seq=0))
    with pytest.raises(OutOfOrderSequenceError, match="expected sequence 1"):
        plog.append(idem([b"b"], seq=2))
    assert plog.log_end_offset == 1


def test_stale_epoch_is_fenced_and_new_epoch_restarts_at_zero(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(idem([b"a"], seq=0, epoch=3))
    with pytest.raises(InvalidProducerEpochError):
        plog.append(idem([b"b"], seq=1, epoch=2))
    with pytest.raises(OutOfOrderSequenceError):
        plog.append(idem([b"b"], seq=5, epoch=4))
    assert plog.append(idem([b"b"], seq=0, epoch=4)).first_offset == 1


def test_unknown_producer_may_start_anywhere_and_others_are_independent(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(idem([b"a"], seq=41, pid=1))
    plog.append(idem([b"b"], seq=0, pid=2))
    plog.append(idem([b"c"], seq=42, pid=1))
    plog.append(make_batch([b"plain"]))  # non-idempotent batches are never checked
    assert plog.log_end_offset == 4


def test_multiple_batches_of_one_request_are_checked_in_order(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    plog.append(idem([b"a"], seq=0))
    with pytest.raises(OutOfOrderSequenceError):
        plog.append(idem([b"b"], seq=1) + idem([b"c"], seq=3))
    plog.append(idem([b"b"], seq=1) + idem([b"c", b"d"], seq=2))
    assert plog.append(idem([b"c", b"d"], seq=2)).duplicate


@pytest.mark.parametrize("clean_close", [True, False])
def test_state_survives_reopen(tmp_path: Path, clean_close: bool) -> None:
    batch = idem([b"x" * 50], seq=0)
    plog = open_log(tmp_path, segment_bytes=len(batch) * 2)
    for seq in range(5):
        plog.append(idem([b"x" * 50], seq=seq))
    if clean_close:
        plog.close()
    else:
        plog.flush()  # simulate a crash: no close, snapshot only from the last roll
    plog = open_log(tmp_path, segment_bytes=len(batch) * 2)
    assert plog.append(idem([b"x" * 50], seq=4)).duplicate
    with pytest.raises(OutOfOrderSequenceError):
        plog.append(idem([b"y"], seq=9))
    assert plog.append(idem([b"y"], seq=5)).first_offset == 5


def test_truncation_rebuilds_state(tmp_path: Path) -> None:
    plog = open_log(tmp_path)
    for seq in range(4):
        plog.append(idem([b"x"], seq=seq))
    plog.truncate_to(2)
    assert plog.append(idem([b"x"], seq=2)).first_offset == 2
