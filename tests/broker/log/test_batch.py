import pytest

from broker.errors import CorruptRecordError
from broker.log import batch

from .helpers import make_batch


def test_header_fields_and_offset_rewrite() -> None:
    data = bytearray(
        make_batch(
            [b"a", b"b", b"c"], timestamp=42, producer_id=9, producer_epoch=1, base_sequence=5
        )
    )
    header = batch.validate(data)
    assert (header.record_count, header.last_offset_delta, header.max_timestamp) == (3, 2, 42)
    assert (header.producer_id, header.producer_epoch, header.last_sequence) == (9, 1, 7)
    assert header.size == len(data) == batch.peek_size(data)
    batch.set_base_offset(data, 0, 1000)
    batch.set_leader_epoch(data, 0, 3)
    rewritten = batch.validate(data)  # still CRC-valid: neither field is covered
    assert (rewritten.base_offset, rewritten.last_offset, rewritten.leader_epoch) == (1000, 1002, 3)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda b: b[:-1], "truncated"),
        (lambda b: b[:30], "header truncated"),
        (lambda b: b[:16] + b"\x01" + b[17:], "magic"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "CRC"),
    ],
)
def test_damaged_batches_are_rejected(damage, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CorruptRecordError, match=message):
        list(batch.iter_batches(damage(make_batch([b"payload"]))))


def test_iter_batches_walks_several() -> None:
    data = make_batch([b"a"]) + make_batch([b"b", b"c"])
    assert [h.record_count for _, h in batch.iter_batches(data)] == [1, 2]
