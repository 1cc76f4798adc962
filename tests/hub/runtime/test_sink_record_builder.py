"""``SinkRecordBuilder``: consumed messages (real confluent-kafka ``Message`` objects) -> what
``put`` gets, with the built-in converters and converters that declare a raw form."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import Message

from hub.api import (
    Converter,
    DataError,
    Header,
    RawForm,
    Schema,
    SchemaAndValue,
    SinkRecord,
    TimestampType,
)
from hub.api.schema import OPTIONAL_STRING_SCHEMA
from hub.api.sink import SinkRecordBatch
from hub.converters.headers import SimpleHeaderConverter, StringHeaderConverter
from hub.converters.json import JsonConverter
from hub.converters.string import StringConverter
from hub.runtime.error_handling import ErrorHandlingConfig, RetryWithToleranceOperator
from hub.runtime.plugin_setup import IdentityChain
from hub.runtime.sink_record_builder import SinkRecordBuilder, new_sink_record


@dataclass
class Converters:
    key: Any
    value: Any
    header: Any


class CountingText(Converter):
    """A third-party text converter: declares its raw form, counts its calls."""

    name = "counting-text"

    def __init__(self, config: Any = None, is_key: bool = False) -> None:
        super().__init__(config or {}, is_key)
        self.calls = 0

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        self.calls += 1
        return None if value is None else str(value).encode()

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        self.calls += 1
        if data is None:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, None)
        try:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise DataError(str(exc)) from None

    def raw_form(self) -> RawForm:
        return RawForm("text", "utf-8", null_safe=True)


class CountingOpaque(CountingText):
    """The same converter without a raw form: the runtime must call it."""

    name = "counting-opaque"

    def raw_form(self) -> RawForm:
        return Converter.raw_form(self)


def builder(converters: Converters, tolerance: str = "none") -> SinkRecordBuilder:
    errors = RetryWithToleranceOperator(
        ErrorHandlingConfig(tolerance=tolerance), "c", 0, stopping=threading.Event()
    )
    b = SinkRecordBuilder(
        converters=converters,
        chain=IdentityChain(),
        errors=errors,
        assigned={("t", 0), ("t", 1)},
        on_new_topic=lambda topic: None,
        log_extra={},
    )
    return b


def message(offset: int, value: bytes | None, partition: int = 0, **extra: Any) -> Message:
    return Message(topic="t", partition=partition, offset=offset, value=value,
                   timestamp=(1, 1000 + offset), **extra)  # fmt: skip


def test_records_equal_what_the_converters_give() -> None:
    b = builder(Converters(StringConverter({}, True), JsonConverter({"schemas.enable": "false"},
                           False), SimpleHeaderConverter({})))  # fmt: skip
    offsets: dict[tuple[str, int], int] = {}
    msgs = [message(0, b'{"a": 1}', key=b"k", headers=[("n", b"7")]), message(1, None, 1)]
    records = b.records(msgs, offsets)
    assert offsets == {("t", 0): 1, ("t", 1): 2}
    assert records[0] == SinkRecord(
        topic="t", partition=0, key="k", value={"a": 1}, key_schema=OPTIONAL_STRING_SCHEMA,
        timestamp=1000, headers=(Header("n", 7, records[0].headers[0].schema),), offset=0,
        timestamp_type=TimestampType.CREATE_TIME,
    )  # fmt: skip
    assert records[1].value is None and records[1].partition == 1


def test_a_declared_text_form_is_inlined_and_an_undeclared_one_is_called() -> None:
    declared, opaque = CountingText(), CountingOpaque()
    msgs = [message(i, f"line {i}".encode()) for i in range(5)]
    first = builder(Converters(declared, declared, StringHeaderConverter({})))
    first.topics_seen.add("t")  # past the topic's first record
    second = builder(Converters(opaque, opaque, StringHeaderConverter({})))
    second.topics_seen.add("t")
    got = first.records(msgs, {})
    assert got == second.records(msgs, {})
    assert [r.value for r in got] == [f"line {i}" for i in range(5)]
    assert declared.calls == 0 and opaque.calls == 10  # key and value of each message


def test_a_bad_message_falls_back_to_the_error_policy() -> None:
    text = StringConverter({}, False)
    b = builder(Converters(text, text, SimpleHeaderConverter({})), tolerance="all")
    b.topics_seen.add("t")
    records = b.records([message(0, b"ok"), message(1, b"\xff\xfe"), message(2, b"ok2")], {})
    assert [r.offset for r in records] == [0, 2]
    assert b.errors.failures == 1
    strict = builder(Converters(text, text, SimpleHeaderConverter({})))
    with pytest.raises(Exception, match="Tolerance exceeded"):
        strict.records([message(1, b"\xff")], {})


def test_batches_carry_the_converters_raw_forms() -> None:
    text = StringConverter({"converter.encoding": "UTF8"}, False)
    b = builder(Converters(text, text, SimpleHeaderConverter({})))
    b.topics_seen.add("t")
    offsets: dict[tuple[str, int], int] = {}
    batch = b.batch([message(0, b"a"), message(1, b"b")], offsets)
    assert isinstance(batch, SinkRecordBatch)
    assert batch.value_conversion.is_text("utf-8") and batch.headers_exact
    assert offsets == {("t", 0): 2}
    assert [r.value for r in batch] == ["a", "b"]
    # a topic not seen yet takes the record path (and notes the topic)
    fresh = builder(Converters(text, text, SimpleHeaderConverter({})))
    assert isinstance(fresh.batch([message(0, b"a")], {}), list) and "t" in fresh.topics_seen


def test_header_fast_path_matches_the_converter() -> None:
    converter = SimpleHeaderConverter({})
    b = builder(Converters(JsonConverter({}, True), JsonConverter({}, False), converter))
    raw = [("n", str(n).encode()) for n in (0, 7, 127, 128, 40_000, 2**31, 2**62, 10**18)]
    raw += [("s", b"us-east"), ("s", b"us-east"), ("b", b"true"), ("z", None), ("j", b"[1]"),
            ("neg", b"-5"), ("f", b"1.5"), ("e", b""), ("pad", b"007")]  # fmt: skip
    for _ in range(2):  # the second round is served from the cache
        got = b.headers("t", raw)
        want = tuple(
            Header(k, sv.value, sv.schema)
            for k, d in raw
            for sv in [converter.to_connect("t", k, d)]
        )
        assert got == want


def test_new_sink_record_equals_the_constructor() -> None:
    fast = new_sink_record("t", 2, b"k", {"v": 1}, None, None, 5, (Header("h", 1),), 9,
                           TimestampType.LOG_APPEND_TIME)  # fmt: skip
    assert fast == SinkRecord(topic="t", partition=2, key=b"k", value={"v": 1}, timestamp=5,
                              headers=(Header("h", 1),), offset=9,
                              timestamp_type=TimestampType.LOG_APPEND_TIME)  # fmt: skip
    assert fast.replace(offset=10).offset == 10
