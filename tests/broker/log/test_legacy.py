"""Message sets of magic 0/1 to v2 batches (old producers) and back (old consumers).

The old side is built and read with kafka-python's legacy record code, the code old-format
clients run; the v2 side with the broker's own batch decoder.
"""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c
from kafka.record import MemoryRecords
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from broker.errors import (
    CorruptRecordError,
    InvalidRecordError,
    InvalidTimestampError,
    UnsupportedCompressionTypeError,
)
from broker.log.legacy import down_convert, up_convert
from broker.log.records import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    Record,
    build_batch,
    decode_batches,
)

CODECS = [CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4]
MESSAGES = [
    (b"k0", b"v0"),
    (None, b"no key"),
    (b"k2", None),
    (b"\x00\xff", b""),
    (b"k4", b"x" * 3000),
]


def _message_set(magic: int, codec: int, messages=MESSAGES, first_ts: int = 1_700_000_000_000):
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 30)
    for i, (key, value) in enumerate(messages):
        builder.append(i, timestamp=first_ts + i, key=key, value=value)
    return bytes(builder.build())


def _read_old(data: bytes) -> list:
    """What an old-format client sees: (offset, timestamp, timestamp type, key, value)."""
    out = []
    records = MemoryRecords(data)
    while (batch := records.next_batch()) is not None:
        assert batch.magic in (0, 1)
        assert batch.validate_crc()
        for r in batch:
            out.append((r.offset, r.timestamp, r.timestamp_type, r.key, r.value))
    return out


def _set_attributes(batch: bytes, bits: int, max_timestamp: int | None = None) -> bytes:
    """A v2 batch with attribute bits set (and maxTimestamp), CRC-32C recomputed."""
    data = bytearray(batch)
    (attributes,) = struct.unpack_from(">h", data, 21)
    struct.pack_into(">h", data, 21, attributes | bits)
    if max_timestamp is not None:
        struct.pack_into(">q", data, 35, max_timestamp)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


# ---------------------------------------------------------------- up (produce v0-v2)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", CODECS)
def test_up_convert_keeps_every_message_in_one_batch(magic, codec):
    (batch,) = decode_batches(up_convert(_message_set(magic, codec)))
    assert batch.compression == codec
    assert batch.producer_id == -1 and not batch.is_transactional and not batch.is_control
    assert [(r.key, r.value) for r in batch.records] == MESSAGES
    assert [r.offset for r in batch.records] == list(range(len(MESSAGES)))
    expected_ts = [1_700_000_000_000 + i for i in range(len(MESSAGES))] if magic else [-1] * 5
    assert [r.timestamp for r in batch.records] == expected_ts


def test_up_convert_joins_several_wrappers_and_plain_messages():
    data = _message_set(1, CODEC_GZIP, MESSAGES[:2]) + _message_set(1, CODEC_NONE, MESSAGES[2:])
    (batch,) = decode_batches(up_convert(data))
    assert [(r.key, r.value) for r in batch.records] == MESSAGES
    assert batch.compression == CODEC_GZIP


def test_up_convert_passes_v2_batches_through():
    v2 = build_batch([Record(0, 5, b"k", b"v")])
    assert up_convert(v2) == v2


def test_up_convert_refuses_a_corrupt_message():
    data = bytearray(_message_set(1, CODEC_NONE))
    data[-1] ^= 0xFF  # last byte of the last value: its CRC no longer matches
    with pytest.raises(CorruptRecordError):
        up_convert(bytes(data))
    compressed = bytearray(_message_set(0, CODEC_GZIP))
    compressed[-5] ^= 0xFF
    with pytest.raises(CorruptRecordError):
        up_convert(bytes(compressed))


def test_up_convert_refuses_truncated_and_empty_sets():
    data = _message_set(0, CODEC_NONE)
    with pytest.raises(CorruptRecordError):
        up_convert(data[:-3])
    with pytest.raises(CorruptRecordError):
        up_convert(data + b"\x00\x00")
    with pytest.raises(InvalidRecordError):
        up_convert(b"")


def test_up_convert_refuses_log_append_time_from_a_producer():
    data = bytearray(_message_set(1, CODEC_NONE, MESSAGES[:1]))
    data[17] |= 0x08  # attributes: LogAppendTime (the CRC check comes later)
    with pytest.raises(InvalidTimestampError):
        up_convert(bytes(data))


# ---------------------------------------------------------------- down (fetch v0-v3)


def _value(offset: int) -> bytes:
    return f"v{offset}".encode() * 40  # compressible: the builder skips useless compression


def _stored(codec: int, offsets=(100, 101, 105, 106), ts: int = 1_700_000_000_000) -> bytes:
    records = [Record(o, ts + o, f"k{o}".encode(), _value(o), (("h", b"x"),)) for o in offsets]
    batch = build_batch(records, compression=codec)
    assert batch[22] & 0x07 == codec
    return batch


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", CODECS)
def test_down_convert_keeps_offsets_keys_values_and_timestamps(magic, codec):
    offsets = (100, 101, 105, 106)  # a compacted batch: gaps must survive
    got = _read_old(down_convert([_stored(codec, offsets)], 100, magic))
    assert [g[0] for g in got] == list(offsets)
    assert [(g[3], g[4]) for g in got] == [(f"k{o}".encode(), _value(o)) for o in offsets]
    if magic == 1:
        assert [g[1] for g in got] == [1_700_000_000_000 + o for o in offsets]
        assert {g[2] for g in got} == {0}  # CreateTime
    else:
        assert {g[1] for g in got} == {None}  # magic 0 has no timestamps


@pytest.mark.parametrize("codec", [CODEC_NONE, CODEC_GZIP])
def test_down_convert_skips_records_before_the_fetch_offset(codec):
    data = [_stored(codec, (10, 11, 12)), _stored(codec, (13, 14))]
    got = _read_old(down_convert(data, 12, 1))
    assert [g[0] for g in got] == [12, 13, 14]
    assert down_convert(data, 15, 1) == b""


def test_down_convert_leaves_out_control_batches():
    marker = Record(3, 0, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 0))  # a COMMIT
    control = _set_attributes(build_batch([marker]), 0x20 | 0x10)
    data = [_stored(CODEC_NONE, (1, 2)), control, _stored(CODEC_NONE, (4,))]
    assert [g[0] for g in _read_old(down_convert(data, 0, 1))] == [1, 2, 4]


@pytest.mark.parametrize("codec", [CODEC_NONE, CODEC_SNAPPY])
def test_down_convert_keeps_log_append_time(codec):
    stamped = _set_attributes(_stored(codec, (7, 8)), 0x08, max_timestamp=1_800_000_000_000)
    got = _read_old(down_convert([stamped], 7, 1))
    assert [(g[0], g[1], g[2]) for g in got] == [
        (7, 1_800_000_000_000, 1),
        (8, 1_800_000_000_000, 1),
    ]


def test_down_convert_refuses_zstd():
    with pytest.raises(UnsupportedCompressionTypeError):
        down_convert([_stored(CODEC_ZSTD)], 100, 1)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", CODECS)
def test_up_then_down_is_what_the_producer_sent(magic, codec):
    stored = up_convert(_message_set(magic, codec))
    got = _read_old(down_convert([stored], 0, magic))
    assert [(g[3], g[4]) for g in got] == MESSAGES
