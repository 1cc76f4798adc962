"""A plain install decodes gzip, snappy, lz4 and zstd batches wherever the broker decodes.

The codec packages must come from ``[project].dependencies``, not from the test extra: the
broker under test runs with every module that only the test extra provides *blocked* (a
``sitecustomize`` import hook in its environment), so a codec that slipped back into the test
extra makes these tests fail instead of passing thanks to the test environment.

Produce (confluent-kafka, each codec), ListOffsets by timestamp (decodes the batch holding
the target) and compaction (decodes and re-encodes with the same codec) run on each codec.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import re
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures._process import REPO
from tests.fixtures.broker import BrokerProcess, wait_until

CODECS = ("gzip", "snappy", "lz4", "zstd")
CODEC_MODULES = {"snappy": "snappy", "lz4": "lz4", "zstd": "zstandard"}  # kafka.codec imports
TIMEOUT = 30.0
KEYS = 10
MESSAGES = 200
BASE_TS = int(time.time() * 1000) - 3_600_000  # an hour ago: old enough to be compacted


def _dist_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _closure(names: set[str]) -> set[str]:
    """Distributions installed because of ``names`` (their requirements, transitively)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        todo.extend(_dist_name(r) for r in requires if "extra ==" not in r)
    return seen


def _test_only_modules() -> list[str]:
    """Top-level modules provided only by distributions of the ``test`` extra."""
    project = _project()
    runtime = _closure({_dist_name(r) for r in project["dependencies"]})
    test_only = {_dist_name(r) for r in project["optional-dependencies"]["test"]} - runtime
    modules = []
    for module, dists in md.packages_distributions().items():
        if {d.lower().replace("_", "-") for d in dists} <= test_only:
            modules.append(module)
    return sorted(modules)


_BLOCKER = """
import sys
BLOCKED = set({modules!r})

class _Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ImportError(f"{{name}} comes only from the test extra (blocked)")
        return None

sys.meta_path.insert(0, _Blocker())
print(f"test-extra modules blocked: {{len(BLOCKED)}}", file=sys.stderr)
"""


def test_codec_packages_are_runtime_dependencies() -> None:
    runtime = {_dist_name(r) for r in _project()["dependencies"]}
    providers = md.packages_distributions()
    for module in CODEC_MODULES.values():
        dists = {d.lower() for d in providers[module]}
        assert dists & runtime, f"{module} ({dists}) is not a runtime dependency"
    assert set(CODEC_MODULES.values()).isdisjoint(_test_only_modules())


class PlainInstallBroker(BrokerProcess):
    """A broker that cannot import anything only the test extra provides."""


@pytest.fixture(scope="module")
def plain_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlainInstallBroker]:
    blocker_dir = tmp_path_factory.mktemp("blocker")
    modules = _test_only_modules()
    assert "hypothesis" in modules and "pytest" in modules  # the hook blocks something real
    (blocker_dir / "sitecustomize.py").write_text(_BLOCKER.format(modules=modules))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", str(blocker_dir))
        proc = PlainInstallBroker(
            tmp_path_factory.mktemp("plain") / "data", "--log-cleaner-backoff-ms", "200"
        )
        proc.start()
    yield proc
    text = proc.log()
    assert proc.stop() == 0, text[-4000:]
    assert "test-extra modules blocked" in text
    assert "handler failed" not in text, text[-4000:]
    assert "log cleaner failed" not in text, text[-4000:]


def _create(broker: BrokerProcess, name: str, config: dict[str, str]) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config=config)])[name].result(TIMEOUT)


def _produce(broker: BrokerProcess, topic: str, codec: str) -> None:
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "compression.type": codec,
            "linger.ms": 0,
            "batch.num.messages": 10,
        }
    )
    errors: list[object] = []
    for i in range(MESSAGES):
        producer.produce(
            topic,
            key=b"key-%d" % (i % KEYS),
            value=(b"value %d of a compressible payload " % i) * 8,
            timestamp=BASE_TS + i,
            on_delivery=lambda err, _m: errors.append(err) if err else None,
        )
        if i % 10 == 9:
            producer.flush(TIMEOUT)  # one batch per ten records: several batches, segments
    assert producer.flush(TIMEOUT) == 0
    assert errors == []


def _consume_all(broker: BrokerProcess, topic: str) -> list[tuple[int, bytes, bytes]]:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "unused",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    out: list[tuple[int, bytes, bytes]] = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == -191:  # _PARTITION_EOF
                    return out
                raise AssertionError(msg.error())
            out.append((msg.offset(), msg.key(), msg.value()))
    finally:
        consumer.close()
    raise AssertionError(f"{topic}: no end of partition within {TIMEOUT}s")


@pytest.mark.parametrize("codec", CODECS)
def test_produce_and_list_offsets_by_timestamp(plain_broker: BrokerProcess, codec: str) -> None:
    topic = f"ts-{codec}"
    _create(plain_broker, topic, {})
    _produce(plain_broker, topic, codec)
    consumer = Consumer({"bootstrap.servers": plain_broker.bootstrap, "group.id": "unused"})
    try:
        for index in (0, 37, 155, MESSAGES - 1):  # inside batches, not only at their start
            [found] = consumer.offsets_for_times(
                [TopicPartition(topic, 0, BASE_TS + index)], TIMEOUT
            )
            assert found.error is None and found.offset == index, (codec, index, found)
        [past] = consumer.offsets_for_times([TopicPartition(topic, 0, BASE_TS + 10**6)], TIMEOUT)
        assert past.offset == -1  # no record that new: end (Kafka answers -1 / latest)
    finally:
        consumer.close()
    records = _consume_all(plain_broker, topic)
    assert [o for o, _, _ in records] == list(range(MESSAGES))


@pytest.mark.parametrize("codec", CODECS)
def test_compaction_of_a_topic_with_each_codec(plain_broker: BrokerProcess, codec: str) -> None:
    topic = f"compacted-{codec}"
    _create(
        plain_broker,
        topic,
        {"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"},
    )
    _produce(plain_broker, topic, codec)
    checkpoint = plain_broker.data_dir / f"{topic}-0" / "cleaner-checkpoint.json"
    wait_until(
        lambda: checkpoint.exists() and json.loads(checkpoint.read_text())["offset"] > 0,
        TIMEOUT,
        f"the cleaner to compact {topic}",
    )
    records = _consume_all(plain_broker, topic)
    assert len(records) < MESSAGES  # something was removed
    newest = {}
    for offset, key, value in records:
        newest[key] = (offset, value)
    for k in range(KEYS):  # every key's newest value survived, at its original offset
        last = MESSAGES - KEYS + k
        assert newest[b"key-%d" % k] == (last, (b"value %d of a compressible payload " % last) * 8)
    log_dir = Path(plain_broker.data_dir / f"{topic}-0")
    assert not (log_dir / "cleaning").exists()


def test_a_missing_codec_fails_the_request_that_needs_it_by_name(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """An installation without zstd (its package blocked, as a broken install would lack it):
    ListOffsets by timestamp on a zstd topic is refused for that partition with Kafka's
    UNSUPPORTED_COMPRESSION_TYPE, the log names the codec, and the broker keeps serving (the
    same connection answers the gzip topic next)."""
    blocker_dir = tmp_path_factory.mktemp("no-zstd")
    (blocker_dir / "sitecustomize.py").write_text(_BLOCKER.format(modules=["zstandard"]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", f"{blocker_dir}:{REPO}")
        broker = BrokerProcess(tmp_path_factory.mktemp("no-zstd-data") / "data")
        broker.start()
    try:
        for codec in ("zstd", "gzip"):
            _create(broker, f"missing-{codec}", {})
            _produce(broker, f"missing-{codec}", codec)  # appends never decode: accepted
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused"})
        try:
            with pytest.raises(KafkaException) as refused:
                consumer.offsets_for_times(
                    [TopicPartition("missing-zstd", 0, BASE_TS + 37)], TIMEOUT
                )
            assert refused.value.args[0].name() == "UNSUPPORTED_COMPRESSION_TYPE"
            [found] = consumer.offsets_for_times(
                [TopicPartition("missing-gzip", 0, BASE_TS + 37)], TIMEOUT
            )
            assert found.error is None and found.offset == 37
        finally:
            consumer.close()
        text = broker.log()
        assert "zstd codec unavailable" in text and "handler failed" not in text, text[-4000:]
    finally:
        assert broker.stop() == 0
