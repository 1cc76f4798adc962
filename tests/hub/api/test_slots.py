"""``slot_setters``: records built through slot setters equal constructed ones; classes of
another shape get None (callers then fall back to the constructor)."""

from __future__ import annotations

from dataclasses import dataclass

from hub.api import Header, SinkRecord, SourceRecord
from hub.api.slots import slot_setters

_SOURCE_FIELDS = ("topic", "partition", "key", "value", "key_schema", "value_schema",
                  "timestamp", "headers", "source_partition", "source_offset")  # fmt: skip


def test_filled_record_equals_the_constructed_one() -> None:
    setters = slot_setters(SourceRecord, _SOURCE_FIELDS)
    assert setters is not None
    values = ("t", 2, "k", "v", None, None, 123, (Header("h", 1),), {"f": "a"}, {"pos": 7})
    record = object.__new__(SourceRecord)
    for setter, value in zip(setters, values, strict=True):
        setter(record, value)
    assert record == SourceRecord(**dict(zip(_SOURCE_FIELDS, values, strict=True)))


def test_setters_come_in_the_order_asked() -> None:
    setters = slot_setters(Header, ("value", "key", "schema"))
    assert setters is not None
    header = object.__new__(Header)
    for setter, value in zip(setters, (1, "k", None), strict=True):
        setter(header, value)
    assert header == Header("k", 1)


def test_other_shapes_get_none() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    assert slot_setters(NoSlots, ("a",)) is None
    assert slot_setters(PostInit, ("a",)) is None
    assert slot_setters(Header, ("key", "value")) is None  # a field missing
    assert slot_setters(Header, ("key", "value", "schema", "extra")) is None
    assert slot_setters(Header, ("key", "key", "schema")) is None
    assert slot_setters(dict, ("a",)) is None
    assert slot_setters(SinkRecord, ("topic",)) is None
