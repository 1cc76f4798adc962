"""Two real Sluice brokers (clusters A and B: separate processes, data dirs and ports), mirror
workers on B (in-process herders, or ``sluice mirror`` as a subprocess), and record helpers.

The brokers are shared by the module's tests; each test uses its own cluster aliases and topic
names (``names``), so MirrorMaker's topics (``<alias>.orders``, offset syncs, checkpoints) never
meet another test's. Records carry their source position in the value (``p:i``), non-UTF-8
bytes in key, value and headers, and an explicit timestamp, so a copy can be checked byte for
byte and per source offset.
"""

from __future__ import annotations

import re
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from hub.plugins.manager import create_plugin_manager
from hub.runtime.config import WorkerConfig
from hub.runtime.herder import Herder
from tests.fixtures._process import ServiceProcess
from tests.fixtures.broker import BrokerProcess, wait_until

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
CONVERTERS = {"key.converter": BYTES, "value.converter": BYTES, "header.converter": BYTES}
SOURCE = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
CHECKPOINT = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
HEARTBEAT = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
BASE_TS = 1_600_000_000_000


class Cluster(Protocol):
    """Anything with a bootstrap address: a BrokerProcess, or a hub's embedded broker."""

    @property
    def bootstrap(self) -> str: ...


@pytest.fixture(scope="module")
def cluster_a(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(tmp_path_factory.mktemp("cluster-a") / "data")
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def cluster_b(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(tmp_path_factory.mktemp("cluster-b") / "data")
    broker.start()
    yield broker
    broker.stop()


@dataclass
class Names:
    """Aliases and a topic prefix unique to one test."""

    source: str
    target: str
    prefix: str

    def remote(self, topic: str) -> str:
        return f"{self.source}.{topic}"


@pytest.fixture
def names() -> Names:
    uid = uuid.uuid4().hex[:6]
    return Names(f"a{uid}", f"b{uid}", f"t{uid}")


def mirror_config(
    names: Names, source: BrokerProcess, target: BrokerProcess, cls: str = SOURCE, **extra: Any
) -> dict[str, str]:
    """A connector config with test-speed intervals and single-broker replication factors."""
    config = {
        "connector.class": cls,
        "source.cluster.alias": names.source,
        "target.cluster.alias": names.target,
        "source.cluster.bootstrap.servers": source.bootstrap,
        "target.cluster.bootstrap.servers": target.bootstrap,
        "topics": f"{names.prefix}.*",
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "refresh.topics.interval.seconds": "1",
        "sync.topic.configs.interval.seconds": "1",
        "refresh.groups.interval.seconds": "1",
        "emit.checkpoints.interval.seconds": "1",
        "emit.heartbeats.interval.seconds": "1",
        **CONVERTERS,
    }
    config.update({k: str(v) for k, v in extra.items()})
    return config


@pytest.fixture
def herder_on() -> Iterator[Callable[..., Herder]]:
    """Starts in-process workers (herders) on a cluster; ``state`` names their internal topics,
    so a second herder with the same ``state`` is a restart of the first."""
    running: list[Herder] = []

    def make(cluster: BrokerProcess, state: str, **settings: Any) -> Herder:
        config = WorkerConfig.from_mapping({
            "bootstrap.servers": cluster.bootstrap,
            "config.storage.topic": f"{state}-configs",
            "offset.storage.topic": f"{state}-offsets",
            "status.storage.topic": f"{state}-status",
            "offset.flush.interval.ms": 200,
            "task.restart.backoff.ms": 200,
            **settings,
        })  # fmt: skip
        herder = Herder(config, registry=create_plugin_manager(load_entrypoints=False))
        herder.start()
        running.append(herder)
        return herder

    yield make
    for herder in running:
        herder.stop()


# -- records ----------------------------------------------------------------------------------


def create_topic(cluster: Cluster, topic: str, partitions: int, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=configs)])[topic].result(15)


def record(partition: int, i: int) -> dict[str, Any]:
    """Record ``i`` of a partition: raw bytes everywhere, repeated header names on some."""
    headers: list[tuple[str, bytes | None]] | None = None
    if i % 3 == 1:
        headers = [("h", b"\xff\x00%d" % i), ("h", None), ("n", b"%d" % i)]
    elif i % 3 == 2:
        headers = [("only", b"\x80")]
    return {
        "key": None if i % 10 == 9 else b"\xfe-key-%d" % i,
        "value": b"%d:%d:\x00\xc3\x28" % (partition, i),
        "headers": headers,
        "timestamp": BASE_TS + i,
    }


def produce(cluster: Cluster, topic: str, partitions: int, start: int, end: int) -> None:
    """Records ``start..end-1`` of every partition, in order (one idempotent producer)."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True,
                         "linger.ms": 5})  # fmt: skip
    for i in range(start, end):
        for p in range(partitions):
            r = record(p, i)
            producer.produce(topic, r["value"], r["key"], partition=p, timestamp=r["timestamp"],
                             headers=r["headers"])  # fmt: skip
        if i % 500 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0


def read_all(cluster: Cluster, topic: str, timeout: float = 20.0) -> dict[int, list[Any]]:
    """Every record of ``topic`` now, per partition, as (key, value, headers, timestamp)."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "mirror-reader",
                         "enable.auto.commit": False})  # fmt: skip
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in meta.partitions
        }
        out: dict[int, list[Any]] = {p: [] for p in ends}
        wanted = {p for p, end in ends.items() if end > 0}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in wanted])
        done: set[int] = set()
        import time

        deadline = time.monotonic() + timeout
        while done != wanted:
            assert time.monotonic() < deadline, f"could not read {topic} to its end"
            for m in consumer.consume(1000, 0.2):
                if m.error() is not None:
                    continue
                out[m.partition()].append(
                    (m.key(), m.value(), m.headers(), m.timestamp()[1], m.offset())
                )
                if m.offset() + 1 >= ends[m.partition()]:
                    done.add(m.partition())
        return out
    finally:
        consumer.close()


def counts(cluster: Cluster, topic: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "mirror-counts"})
    try:
        meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if meta is None or meta.error is not None:
            return {}
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in meta.partitions
        }
    finally:
        consumer.close()


def topics(cluster: Cluster) -> set[str]:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    return set(admin.list_topics(timeout=10).topics)


def wait_for_counts(cluster: Cluster, topic: str, expected: dict[int, int],
                    timeout: float = 60.0) -> None:  # fmt: skip
    wait_until(lambda: counts(cluster, topic) == expected, timeout,
               f"{topic} to hold {expected} (has {counts(cluster, topic)})")  # fmt: skip


# -- sluice mirror as a process ---------------------------------------------------------------

_RUNNING = re.compile(r"mirror running flows=")


class MirrorProcess(ServiceProcess):
    """``sluice mirror --config FILE`` with start/stop/kill; ready at ``mirror running``."""

    name = "mirror"
    stop_timeout = 30.0

    def __init__(self, config: Path) -> None:
        super().__init__(config.with_suffix(".log"))
        self.config = config

    def start(self) -> None:
        self._spawn([sys.executable, "-m", "sluice", "mirror", "--config", str(self.config)])
        wait_until(self._running, 60, "sluice mirror to log 'mirror running'")

    def _running(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"sluice mirror exited:\n{self.log(since_start=True)[-6000:]}")
        return bool(_RUNNING.search(self.log(since_start=True)))
