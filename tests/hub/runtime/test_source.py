"""Source tasks: exactly-once across a clean worker restart, topic creation, offsets; a
third-party task returning ``SourceRecordBatch``es gets the same messages, offsets, error
handling and hooks as one returning their records."""

from __future__ import annotations

import collections
import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from hub.api import (
    ConfigModel,
    Header,
    SourceConnector,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
)
from hub.api.schema import STRING_SCHEMA
from hub.plugins.hookspecs import hookimpl
from hub.plugins.manager import create_plugin_manager
from hub.runtime.config import WorkerConfig
from hub.runtime.herder import Herder
from sluice.embedded_broker import EmbeddedBroker
from tests.fixtures.broker import wait_until
from tests.hub.runtime.conftest import read_topic, worker_settings
from tests.hub.runtime.sample_plugins import SamplePlugin


def values(hub_broker: EmbeddedBroker, topic: str) -> list[tuple[int, int]]:
    return [
        (v["p"], v["n"])
        for v in (json.loads(m.value()) for m in read_topic(hub_broker.bootstrap, topic))
    ]


def counter(name: str, topic: str, **extra: object) -> dict[str, str]:
    return {"connector.class": "counter", "topic": topic, **{k: str(v) for k, v in extra.items()}}


def test_source_delivers_exactly_once_across_clean_restart(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    n, partitions = 3000, 2
    herder = herder_factory()
    herder.create_connector(
        name, counter(name, topic_name, count=n, batch=20, partitions=partitions, poll_delay_ms=5)
    )
    wait_until(lambda: len(read_topic(hub_broker.bootstrap, topic_name)) > 200, 20, "some records")
    herder.stop()
    assert len(values(hub_broker, topic_name)) < n * partitions, "stopped too late to test resuming"

    again = herder_factory()
    assert again.connector_status(name)["tasks"][0]["state"] == "RUNNING"
    wait_until(
        lambda: len(read_topic(hub_broker.bootstrap, topic_name)) >= n * partitions, 30, "all"
    )
    got = values(hub_broker, topic_name)
    dupes = [v for v, c in collections.Counter(got).items() if c > 1]
    assert not dupes, f"{len(dupes)} duplicates, e.g. {dupes[:5]}"
    assert sorted(got) == [(p, i) for p in range(partitions) for i in range(1, n + 1)]
    by_partition = collections.defaultdict(list)
    for p, i in got:
        by_partition[p].append(i)
    assert all(seq == sorted(seq) for seq in by_partition.values()), "order per source partition"
    assert again.connector_topics(name) == [topic_name]

    def committed() -> list[tuple[int, int]]:
        offsets = again.connector_offsets(name)["offsets"]
        return sorted((o["partition"]["p"], o["offset"]["n"]) for o in offsets)

    wait_until(lambda: committed() == [(p, n) for p in range(partitions)], 10, "final offsets")


# -- SourceRecordBatch: a third-party connector returning columns ------------------------------


class BatchConfig(ConfigModel):
    topic: str
    count: int = 1000
    batch: int = 250
    mode: str = "columns"  # "columns": poll returns batches; "records": their records()
    bad: int = 0  # the n whose value cannot be encoded (a lone surrogate), 0 for none


COMMITTED_LISTS: dict[str, list[list[Any]]] = collections.defaultdict(list)


class BatchTask(SourceTask):
    """Emits ``1..count`` in batches: keyed, text values held as UTF-8 bytes (some not ASCII),
    a shared header, a counter header, a text header, the offset ``{"n": n}``."""

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = BatchConfig.parse(config)
        last = self.context.offset_reader.offset({"src": "main"})
        self.n = int(last["n"]) if last else 0
        self.stopping = threading.Event()

    def poll(self) -> Any:
        c = self.config
        if self.n >= c.count:
            self.stopping.wait(0.01)  # all sent: idle briefly, as a real source would
            return None
        ns = range(self.n + 1, min(c.count, self.n + c.batch) + 1)
        self.n = ns[-1]
        values: list[Any] = [f"v{n} caf\u00e9".encode() for n in ns]
        if c.bad in ns:
            values = [v.decode() for v in values]
            values[c.bad - ns.start] = "bad \ud800"  # StringConverter cannot encode it
        batch = SourceRecordBatch(
            c.topic,
            {"src": "main"},
            values,
            encoding="utf-8",
            keys=[f"k{n % 7}" for n in ns],
            headers=[Header("origin", "batch-test")],
            header_columns=[("n", ns), ("tag", [f"t{n % 3}" for n in ns])],
            offset_columns={"n": ns},
        )
        return batch if c.mode == "columns" else batch.records()

    def stop(self) -> None:
        self.stopping.set()


class CommitRecordsBatchTask(BatchTask):
    def commit_records(self, records: list[SourceRecord]) -> None:
        COMMITTED_LISTS[self.config.topic].append(records)


class BatchSource(SourceConnector):
    name = "batch-source"
    config_model = BatchConfig

    def start(self, config: Any) -> None:
        self.raw = config.raw()

    @classmethod
    def task_class(cls) -> type[Any]:
        return BatchTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [dict(self.raw)]


class HookedBatchSource(BatchSource):
    name = "hooked-batch-source"

    @classmethod
    def task_class(cls) -> type[Any]:
        return CommitRecordsBatchTask


class BatchPlugin:
    @hookimpl
    def sluice_connectors(self) -> list[type[Any]]:
        return [BatchSource, HookedBatchSource]


@pytest.fixture
def batch_herder(hub_broker: EmbeddedBroker) -> Iterator[Herder]:
    """A worker whose producer queue holds 100 records, so producing a 250-record batch
    meets a full queue (BufferError) and must resume where it stopped."""
    settings = worker_settings(
        hub_broker.bootstrap,
        f"batches-{uuid.uuid4().hex[:8]}",
        **{"producer.queue.buffering.max.messages": 100, "producer.linger.ms": 20},
    )
    registry = create_plugin_manager([SamplePlugin(), BatchPlugin()], load_entrypoints=False)
    herder = Herder(WorkerConfig.from_mapping(settings), registry=registry)
    herder.start()
    yield herder
    herder.stop()


STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "topic.creation.default.partitions": "3",
}


def _messages(bootstrap: str, topic: str) -> list[tuple[Any, ...]]:
    found = read_topic(bootstrap, topic)
    return sorted((m.partition(), m.offset(), m.key(), m.value(), m.headers()) for m in found)


def _run(herder: Herder, bootstrap: str, name: str, config: dict[str, Any], n: int) -> Any:
    topic = f"{name}-{uuid.uuid4().hex[:6]}"
    settings = {k: str(v) for k, v in config.items()}
    herder.create_connector(
        name, {"connector.class": "batch-source", "topic": topic, **STRINGS, **settings}
    )
    wait_until(lambda: len(read_topic(bootstrap, topic)) >= n, 30, f"{name}: {n} messages")

    def committed() -> Any:
        return herder.connector_offsets(name)["offsets"]

    wait_until(lambda: [o["offset"] for o in committed()] == [{"n": 1000}], 20, "the last offset")
    return _messages(bootstrap, topic), committed()


def test_batches_produce_what_their_records_produce(
    batch_herder: Herder, hub_broker: EmbeddedBroker, name: str
) -> None:
    columns = _run(batch_herder, hub_broker.bootstrap, f"{name}-c", {"mode": "columns"}, 1000)
    records = _run(batch_herder, hub_broker.bootstrap, f"{name}-r", {"mode": "records"}, 1000)
    assert columns == records  # the same keys, values, headers, partitions and offsets
    messages, offsets = columns
    assert len(messages) == 1000 and offsets[0]["partition"] == {"src": "main"}
    by_n = {int(dict(m[4])["n"]): m for m in messages}
    assert sorted(by_n) == list(range(1, 1001))
    assert by_n[5][2:] == (b"k5", "v5 caf\u00e9".encode(),
                           [("origin", b"batch-test"), ("n", b"5"), ("tag", b"t2")])  # fmt: skip
    assert len({m[0] for m in messages}) > 1  # keyed: spread over partitions as records are


def test_a_batch_that_cannot_convert_takes_the_error_policy(
    batch_herder: Herder, hub_broker: EmbeddedBroker, name: str
) -> None:
    messages, _ = _run(
        batch_herder, hub_broker.bootstrap, name, {"bad": 400, "errors.tolerance": "all"}, 999
    )
    got = sorted(int(dict(m[4])["n"]) for m in messages)
    assert got == [n for n in range(1, 1001) if n != 400]  # skipped, the rest of its batch sent


def test_commit_records_hook_gets_the_batches_as_records(
    batch_herder: Herder, hub_broker: EmbeddedBroker, name: str
) -> None:
    topic = f"{name}-{uuid.uuid4().hex[:6]}"
    batch_herder.create_connector(
        name, {"connector.class": "hooked-batch-source", "topic": topic, **STRINGS}
    )
    wait_until(lambda: sum(map(len, COMMITTED_LISTS[topic])) >= 1000, 30, "every record safe")
    lists = COMMITTED_LISTS[topic]
    assert all(len(records) == 250 for records in lists)
    flat = [r for records in lists for r in records]
    assert all(type(r) is SourceRecord for r in flat)
    assert [r.source_offset["n"] for r in flat] == list(range(1, 1001))
    assert flat[0].value == "v1 caf\u00e9" and flat[0].key == "k1"


def test_batch_records_are_the_records_it_describes() -> None:
    batch = SourceRecordBatch(
        "t",
        {"src": "a"},
        [b"caf\xc3\xa9", b"bad \xff", "already text"],
        encoding="utf-8",
        keys=["k1", None, b"k3"],
        headers=[Header("origin", "x")],
        header_columns=[("n", range(7, 10)), ("tag", ["a", None, "c"])],
        offset={"src": "a", "epoch": 2},
        offset_columns={"n": range(7, 10)},
        partition=1,
        timestamps=[1000, None, 3000],
    )
    rows = zip(
        ["k1", None, b"k3"],
        ["caf\u00e9", "bad \ufffd", "already text"],
        [1000, None, 3000],
        range(7, 10),
        ["a", None, "c"],
        strict=True,
    )
    expected = [
        SourceRecord(
            topic="t",
            partition=1,
            key=key,
            value=value,
            value_schema=STRING_SCHEMA,
            timestamp=ts,
            headers=(Header("origin", "x"), Header("n", n), Header("tag", tag)),
            source_partition={"src": "a"},
            source_offset={"src": "a", "epoch": 2, "n": n},
        )
        for key, value, ts, n, tag in rows
    ]
    assert batch.records() == expected and list(batch) == expected and batch[1:] == expected[1:]
    assert batch.last_offset() == {"src": "a", "epoch": 2, "n": 9}
    assert batch.records() is batch.records()  # built once
    with pytest.raises(ValueError, match="3 entries"):
        SourceRecordBatch("t", {}, [b"a", b"b", b"c"], header_columns=[("n", range(2))])
