"""``slot_setters`` (private) and ``record_factory`` (the contract built on it): records built
through slot setters equal constructed ones; classes of another shape get None, and the
factory then falls back to the constructor."""

from __future__ import annotations

from dataclasses import dataclass

from hub.api import Header, SinkRecord, SourceRecord
from hub.api._slots import slot_setters

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


def test_record_factory_builds_what_the_constructor_builds() -> None:
    from hub.api import record_factory
    from hub.api.schema import STRING_SCHEMA

    make = record_factory(SourceRecord, ("topic", "value"), value_schema=STRING_SCHEMA)
    a, b = make("t", "x"), make("t", "y")
    assert a == SourceRecord(topic="t", value="x", value_schema=STRING_SCHEMA)
    assert a.source_partition == {} and a.source_partition is not b.source_partition
    assert record_factory(Header, ("key", "value"), schema=None)("k", 1) == Header("k", 1)


def test_record_factory_rejects_unknown_or_doubled_fields() -> None:
    import pytest

    from hub.api import record_factory

    with pytest.raises(TypeError, match="no field"):
        record_factory(SourceRecord, ("topic", "nope"))
    with pytest.raises(TypeError, match="passed or fixed"):
        record_factory(SourceRecord, ("topic",), topic="t")


def test_record_factory_falls_back_to_the_constructor_for_other_shapes() -> None:
    from hub.api import record_factory

    @dataclass(frozen=True)
    class Plain:  # no slots: the factory must still build equal objects
        a: int
        b: int = 2

    assert record_factory(Plain, ("a",))(1) == Plain(1)


def test_record_factory_many_builds_a_column_of_records() -> None:
    from hub.api import record_factory

    one = record_factory(Header, ("value",), key="k", schema=None)
    assert one.many([1, 2]) == [Header("k", 1), Header("k", 2)]  # type: ignore[attr-defined]
    two = record_factory(SourceRecord, ("topic", "value"))
    assert two.many(["a", "b"], [1, 2]) == [  # type: ignore[attr-defined]
        SourceRecord(topic="a", value=1),
        SourceRecord(topic="b", value=2),
    ]
