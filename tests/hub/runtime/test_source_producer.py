"""``SourceProducer`` against the session broker through a real confluent-kafka producer:
each path gives the same bytes, raw forms decide the fast paths, and offsets become
committable only once everything of a poll result was acknowledged."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Producer

from hub.api import (
    Header,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
)
from hub.converters.headers import SimpleHeaderConverter
from hub.converters.string import StringConverter
from hub.runtime.error_handling import ErrorHandlingConfig, RetryWithToleranceOperator
from hub.runtime.plugin_setup import IdentityChain
from hub.runtime.source_producer import SourceProducer
from hub.runtime.submitted_records import SubmittedRecords
from sluice.embedded_broker import EmbeddedBroker
from tests.hub.runtime.conftest import read_topic
from tests.hub.runtime.test_sink_record_builder import CountingOpaque, CountingText


@dataclass
class Converters:
    key: Any
    value: Any
    header: Any


class Task(SourceTask):
    def start(self, config: Any) -> None: ...
    def poll(self) -> None: ...
    def stop(self) -> None: ...


def run(broker: EmbeddedBroker, converters: Converters, result: Any, tolerance: str = "none"):
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 1})
    submitted = SubmittedRecords()
    stopping = threading.Event()
    errors = RetryWithToleranceOperator(
        ErrorHandlingConfig(tolerance=tolerance), "c", 0, stopping=stopping
    )
    created: list[str] = []
    sp = SourceProducer(
        task=Task(None),  # type: ignore[arg-type]
        converters=converters,
        chain=IdentityChain(),
        errors=errors,
        producer=producer,
        submitted=submitted,
        ensure_topic=created.append,
        stopping=stopping,
        log_extra={},
    )
    sp.send(result)
    assert producer.flush(15) == 0
    return submitted, created


def lines(topic: str, n: int) -> SourceRecordBatch:
    return SourceRecordBatch(
        topic,
        {"file": "a"},
        [f"line {i}".encode() for i in range(n)],
        encoding="utf-8",
        headers=[Header("host", "h1")],
        header_columns=[("seq", range(1, n + 1))],
        offset={"file": "a"},
        offset_columns={"position": list(range(10, 10 * n + 1, 10))},
    )


def wire(broker: EmbeddedBroker, topic: str) -> list[tuple[Any, ...]]:
    return [(m.key(), m.value(), m.headers()) for m in read_topic(broker.bootstrap, topic)]


def test_a_declared_raw_form_produces_the_columns_as_they_are(
    hub_broker: EmbeddedBroker, topic_name: str
) -> None:
    declared = CountingText()
    submitted, created = run(
        hub_broker, Converters(declared, declared, SimpleHeaderConverter({})), lines(topic_name, 5)
    )
    assert declared.calls == 0  # the columns went out as they are
    assert created == [topic_name]
    assert wire(hub_broker, topic_name) == [
        (None, f"line {i}".encode(), [("host", b"h1"), ("seq", str(i + 1).encode())])
        for i in range(5)
    ]
    ((partition, offset),) = submitted.committable()
    assert partition == {"file": "a"} and offset == {"file": "a", "position": 50}


def test_without_a_raw_form_the_converter_is_called_with_the_same_result(
    hub_broker: EmbeddedBroker, topic_name: str
) -> None:
    opaque = CountingOpaque()
    run(hub_broker, Converters(opaque, opaque, SimpleHeaderConverter({})), lines(topic_name, 5))
    assert opaque.calls == 10  # the batch became records: key and value of each
    first = f"{topic_name}-declared"
    declared = CountingText()
    run(hub_broker, Converters(declared, declared, SimpleHeaderConverter({})), lines(first, 5))
    assert wire(hub_broker, topic_name) == wire(hub_broker, first)


def test_a_record_that_does_not_convert_takes_the_error_policy(
    hub_broker: EmbeddedBroker, topic_name: str
) -> None:
    text = StringConverter({"converter.encoding": "ascii"}, False)
    records = [
        SourceRecord(topic=topic_name, value=v, source_partition={"p": 0}, source_offset={"n": i})
        for i, v in enumerate(["ok", "caf\u00e9", "fine"])
    ]
    submitted, _ = run(
        hub_broker, Converters(text, text, SimpleHeaderConverter({})), records, tolerance="all"
    )
    assert [m[1] for m in wire(hub_broker, topic_name)] == [b"ok", b"fine"]
    assert submitted.committable() == [({"p": 0}, {"n": 2})]
