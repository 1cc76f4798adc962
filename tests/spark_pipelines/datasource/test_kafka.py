"""The confluent-kafka read path (``_kafka._consume_range``) when events come with the records.

With ``enable.partition.eof`` a ``consume()`` may return records and a ``_PARTITION_EOF`` event
in one list; whether it does depends on timing (the EOF follows an empty fetch, which the broker
may hold for up to ``fetch.wait.max.ms``). Both tests force that case: one with hand-made
messages, one against the broker with ``fetch.wait.max.ms=1``, which answers the empty fetch at
once, so the EOF lands inside the first ``consume()``'s 0.5 s window.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from spark_pipelines.datasource import _kafka
from spark_pipelines.datasource._kafka import ARROW_SCHEMA
from tests.spark_pipelines._kafka import create_topic

STAMP_MS = 1_700_000_000_000


class _ScriptedClient:
    """Stands in for a Consumer: each ``consume()`` returns the next scripted list."""

    def __init__(self, *batches: list[Message], high: int) -> None:
        self.batches = list(batches)
        self.high = high
        self.assigned: list[TopicPartition] = []

    def assign(self, partitions: list[TopicPartition]) -> None:
        self.assigned = partitions

    def consume(self, num_messages: int, timeout: float) -> list[Message]:
        return self.batches.pop(0) if self.batches else []

    def get_watermark_offsets(self, tp: TopicPartition, **_: object) -> tuple[int, int]:
        return 0, self.high


def _record(offset: int) -> Message:
    return Message(
        topic="t", partition=0, offset=offset, value=b"v%d" % offset, timestamp=(1, STAMP_MS)
    )


def _eof(offset: int) -> Message:
    return Message(
        topic="t", partition=0, offset=offset, error=KafkaError(KafkaError._PARTITION_EOF)
    )


def test_eof_in_the_same_consume_as_records():
    """Was ``SystemError: <class 'zip'> returned a result with an exception set`` (or the same
    from ``list.count``): KafkaError == None leaves a TypeError set in confluent-kafka."""
    client = _ScriptedClient([_record(0), _record(1), _record(2), _eof(3)], high=3)
    batches = list(_kafka._consume_range(client, "t", 0, 0, 3, ()))  # type: ignore[arg-type]
    table = pa.Table.from_batches(batches, ARROW_SCHEMA)
    assert table.column("offset").to_pylist() == [0, 1, 2]
    assert table.column("value").to_pylist() == [b"v0", b"v1", b"v2"]
    assert client.batches == []


def test_eof_alone_after_a_hole_ends_the_read():
    """Records stop short of ``end`` (a hole up to the high watermark): the EOF ends the read."""
    client = _ScriptedClient([_record(0), _record(1)], [_eof(4)], high=4)
    batches = list(_kafka._consume_range(client, "t", 0, 0, 4, ()))  # type: ignore[arg-type]
    assert pa.Table.from_batches(batches).column("offset").to_pylist() == [0, 1]


class _RecordingConsumer:
    """A real Consumer that notes, per ``consume()``, which returned items were events."""

    def __init__(self, client: Consumer, seen: list[list[bool]]) -> None:
        self._client = client
        self._seen = seen

    def consume(self, *args: Any, **kwargs: Any) -> list[Message]:
        msgs = self._client.consume(*args, **kwargs)
        self._seen.append([m.error() is not None for m in msgs])
        return msgs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_start_below_log_start_with_eof_in_the_first_consume(broker, topic_name, monkeypatch):
    """The flaky full-suite failure of ``test_start_below_log_start_falls_back_and_reads_from_it``
    made deterministic: the out-of-range start is reset to the log start, and the EOF that
    follows the records arrives in the same ``consume()``."""
    create_topic(broker.bootstrap, topic_name, 1)
    prod = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(20):
        prod.produce(topic_name, b"v%d" % i, partition=0)
    assert prod.flush(30) == 0
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    (future,) = admin.delete_records([TopicPartition(topic_name, 0, 6)]).values()
    future.result(20)

    seen: list[list[bool]] = []
    real: Callable[..., Consumer] = _kafka.consumer
    monkeypatch.setattr(
        _kafka, "consumer", lambda config, **extra: _RecordingConsumer(real(config, **extra), seen)
    )
    config = {"bootstrap.servers": broker.bootstrap, "fetch.wait.max.ms": "1"}
    batches = list(_kafka.read_range(config, topic_name, 0, 0, 20, native=False))
    table = pa.Table.from_batches(batches, ARROW_SCHEMA)
    assert table.column("offset").to_pylist() == list(range(6, 20))
    # The case under test really happened: records and an event in one consume().
    assert any(any(flags) and not all(flags) for flags in seen), seen
