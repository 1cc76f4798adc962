"""``SourceTask.commit_batch``: each record of a ``SourceRecordBatch`` with the Kafka offset it
was written at, on the columnar path and on the record path (transforms, conversion errors,
a batch without a partition), with the producer queue overflowing mid-batch."""

from __future__ import annotations

import collections
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from hub.api import ConfigModel, SourceConnector, SourceRecordBatch, SourceTask
from hub.plugins.hookspecs import hookimpl
from hub.plugins.manager import create_plugin_manager
from hub.runtime.config import WorkerConfig
from hub.runtime.herder import Herder
from sluice.embedded_broker import EmbeddedBroker
from tests.fixtures.broker import wait_until
from tests.hub.runtime.conftest import read_topic, worker_settings

ACKED: dict[str, list[tuple[list[int], list[int | None], int | None]]] = collections.defaultdict(
    list
)


class AckedConfig(ConfigModel):
    topic: str
    count: int = 1000
    batch: int = 250
    partition: int = -1  # -1: no partition (the producer's partitioner)
    bad: int = 0  # the n whose value cannot be encoded, 0 for none


class AckedTask(SourceTask):
    def start(self, config: Mapping[str, Any]) -> None:
        self.config = AckedConfig.parse(config)
        self.n = 0
        self.stopping = threading.Event()

    def poll(self) -> Any:
        c = self.config
        if self.n >= c.count:
            self.stopping.wait(0.01)
            return None
        ns = list(range(self.n + 1, min(c.count, self.n + c.batch) + 1))
        self.n = ns[-1]
        values: list[Any] = [f"v{n}".encode() for n in ns]
        if c.bad in ns:
            values = [v.decode() for v in values]
            values[c.bad - ns[0]] = "bad \ud800"
        return SourceRecordBatch(
            c.topic, {"src": "main"}, values, encoding="utf-8", keys=[f"k{n}" for n in ns],
            header_columns=[("n", ns)], offset_columns={"n": ns},
            partition=None if c.partition < 0 else c.partition,
        )  # fmt: skip

    def commit_batch(self, batch: SourceRecordBatch, offsets: Sequence[int | None]) -> None:
        ACKED[self.config.topic].append((list(batch.offset_columns["n"]), list(offsets),
                                         batch.partition))  # fmt: skip

    def stop(self) -> None:
        self.stopping.set()


class AckedSource(SourceConnector):
    name = "acked-source"
    config_model = AckedConfig

    def start(self, config: Any) -> None:
        self.raw = config.raw()

    @classmethod
    def task_class(cls) -> type[Any]:
        return AckedTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [dict(self.raw)]


class AckedPlugin:
    @hookimpl
    def sluice_connectors(self) -> list[type[Any]]:
        return [AckedSource]


@pytest.fixture
def herder(hub_broker: EmbeddedBroker) -> Iterator[Herder]:
    """A producer queue of 100 records: a 250-record batch overflows it mid-batch."""
    settings = worker_settings(
        hub_broker.bootstrap, f"acked-{uuid.uuid4().hex[:8]}",
        **{"producer.queue.buffering.max.messages": 100, "producer.linger.ms": 20},
    )  # fmt: skip
    registry = create_plugin_manager([AckedPlugin()], load_entrypoints=False)
    herder = Herder(WorkerConfig.from_mapping(settings), registry=registry)
    herder.start()
    yield herder
    herder.stop()


def _run(herder: Herder, bootstrap: str, name: str, expect: int, **config: Any) -> Any:
    topic = f"{name}-{uuid.uuid4().hex[:6]}"
    herder.create_connector(name, {
        "connector.class": "acked-source", "topic": topic,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "topic.creation.default.partitions": "3", **{k: str(v) for k, v in config.items()},
    })  # fmt: skip
    wait_until(lambda: sum(len(n) for n, _, _ in ACKED[topic]) >= 1000, 30, "every batch acked")
    written = {
        int(dict(m.headers())["n"]): (m.partition(), m.offset())
        for m in read_topic(bootstrap, topic)
    }
    assert len(written) == expect
    return ACKED[topic], written


def _check(acked: Any, written: dict[int, tuple[int, int]]) -> None:
    assert [n for ns, _, _ in acked for n in ns] == list(range(1, 1001))  # once each, in order
    for ns, offsets, partition in acked:
        for n, offset in zip(ns, offsets, strict=True):
            if n not in written:
                assert offset is None
                continue
            where = written[n]
            assert offset == where[1], (n, offset, where)
            if partition is not None:
                assert where[0] == partition


def test_columnar_batches_learn_their_offsets(
    herder: Herder, hub_broker: EmbeddedBroker, name: str
) -> None:
    _check(*_run(herder, hub_broker.bootstrap, name, 1000, partition=1))


def test_record_path_with_a_skipped_record(
    herder: Herder, hub_broker: EmbeddedBroker, name: str
) -> None:
    acked, written = _run(herder, hub_broker.bootstrap, name, 999, partition=2, bad=400,
                          **{"errors.tolerance": "all"})  # fmt: skip
    _check(acked, written)
    assert [offsets[ns.index(400)] for ns, offsets, _ in acked if 400 in ns] == [None]


def test_transformed_batches_learn_their_offsets(
    herder: Herder, hub_broker: EmbeddedBroker, name: str
) -> None:
    _check(*_run(herder, hub_broker.bootstrap, name, 1000, partition=0, **{
        "transforms": "tag", "transforms.tag.type":
        "org.apache.kafka.connect.transforms.InsertHeader",
        "transforms.tag.header": "via", "transforms.tag.value.literal": "smt",
    }))  # fmt: skip


def test_batches_without_a_partition_learn_their_offsets(
    herder: Herder, hub_broker: EmbeddedBroker, name: str
) -> None:
    acked, written = _run(herder, hub_broker.bootstrap, name, 1000)
    _check(acked, written)
    assert len({p for p, _ in written.values()}) > 1  # the partitioner spread them
