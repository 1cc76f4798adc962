"""The ``__consumer_offsets`` record codec and Kafka's group-to-partition mapping."""

from __future__ import annotations

import struct

import pytest

from broker.coordinator.offsets_topic import java_string_hash, partition_for
from broker.coordinator.records import (
    GroupKey,
    GroupValue,
    MemberValue,
    OffsetKey,
    OffsetValue,
    decode_group,
    decode_key,
    decode_offset,
    encode_group,
    encode_key,
    encode_offset,
)


def test_keys_round_trip_and_use_kafka_versions() -> None:
    offset_key = OffsetKey("grp", "orders", 7)
    raw = encode_key(offset_key)
    assert raw == struct.pack(">hh3sh6si", 1, 3, b"grp", 6, b"orders", 7)
    assert decode_key(raw) == offset_key
    assert decode_key(encode_key(GroupKey("grp"))) == GroupKey("grp")
    with pytest.raises(ValueError):
        decode_key(struct.pack(">h", 9))


def test_values_round_trip() -> None:
    value = OffsetValue(42, 3, "meta ✓", 1_700_000_000_000)
    assert decode_offset(encode_offset(value)) == value
    group = GroupValue(
        "consumer",
        5,
        "range",
        "m-1",
        123,
        (MemberValue("m-1", "i-1", "client", "/10.0.0.1", 300_000, 10_000, b"sub", b"asg"),),
    )
    assert decode_group(encode_group(group)) == group
    empty = GroupValue("consumer", 6, None, None)
    assert decode_group(encode_group(empty)) == empty


def test_partition_mapping_matches_kafka() -> None:
    assert java_string_hash("hello") == 99162322  # "hello".hashCode() in Java
    assert java_string_hash("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("hello", 50) == 99162322 % 50
    assert 0 <= partition_for("é-group", 50) < 50


def test_truncated_values_raise_value_error() -> None:
    raw = encode_group(GroupValue("consumer", 1, "range", "m", 0, ()))
    for cut in (1, 5, len(raw) - 1):
        with pytest.raises(ValueError):
            decode_group(raw[:cut])
    with pytest.raises(ValueError):
        decode_offset(encode_offset(OffsetValue(1))[:9])
    with pytest.raises(ValueError):
        decode_key(b"\x00")
