"""The worker hands ``put`` a ``SinkRecordBatch``: records equal to the eager path's, raw
columns that match them, the error policy kept for sinks that never look, a plain list when a
transform is configured, and the file sink writing through the columns byte for byte what the
record path writes. Real broker, real Herder; the probe sink below is a plugin like any other.
"""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from connectors.file.sink_task import sidecar_path
from hub.api import ConfigModel, RetriableError, SinkConnector, SinkRecord, SinkTask
from hub.api.sink import SinkRecordBatch
from hub.plugins.hookspecs import hookimpl
from hub.plugins.manager import create_plugin_manager
from hub.runtime.config import WorkerConfig
from hub.runtime.herder import Herder
from sluice.embedded_broker import EmbeddedBroker
from tests.fixtures.broker import wait_until
from tests.hub.runtime.conftest import read_topic, worker_settings
from tests.hub.runtime.sample_plugins import SamplePlugin
from tests.hub.runtime.test_failures import task_state
from tests.hub.runtime.test_sink import committed

STRING = "org.apache.kafka.connect.storage.StringConverter"
# A transform that keeps every record: Filter guarded by a predicate that never matches.
KEEP_ALL = {"transforms": "keep", "transforms.keep.type": "Filter",
            "transforms.keep.predicate": "never", "predicates": "never",
            "predicates.never.type": "TopicNameMatches",
            "predicates.never.pattern": "no-such-topic"}  # fmt: skip


class Probe:
    """What the probe sinks saw, per connector name (tasks are recreated on restarts)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.kinds: dict[str, list[str]] = defaultdict(list)  # "batch" / "list", non-empty puts
        self.records: dict[str, list[SinkRecord]] = defaultdict(list)
        self.mismatches: dict[str, list[str]] = defaultdict(list)
        self.batches: dict[str, list[SinkRecordBatch]] = defaultdict(list)  # mode "columns"
        self.messages: dict[str, int] = defaultdict(int)  # mode "columns"


PROBE = Probe()


class ProbeConfig(ConfigModel):
    # compare: check columns against records; ignore: never look at the records; swallow:
    # catch a conversion failure; retry: turn it into RetriableError; columns: read the
    # values column only, as a sink writing raw bytes does
    mode: str = "compare"


class ProbeTask(SinkTask):
    def start(self, config: Mapping[str, Any]) -> None:
        self.name = config["connector"]
        self.mode = ProbeConfig.parse(config).mode

    def put(self, records: Sequence[SinkRecord]) -> None:
        batch = records if type(records) is SinkRecordBatch else None
        if self.mode == "ignore":
            return
        if self.mode == "columns":
            with PROBE.lock:
                if batch is None:
                    PROBE.messages[self.name] += len(records)
                else:
                    PROBE.messages[self.name] += len(batch.values)
                    PROBE.batches[self.name].append(batch)
            return
        if self.mode == "swallow":
            # hides a conversion failure from the runtime, which must still fail the task
            with contextlib.suppress(Exception):
                list(records)
            return
        if self.mode == "retry":
            try:
                list(records)
            except Exception as exc:  # retrying cannot make the conversion succeed
                raise RetriableError("later") from exc
            return
        got = list(records)
        if not got and batch is None:
            return
        problems = [] if batch is None else self._compare(batch, got)
        with PROBE.lock:
            PROBE.kinds[self.name].append("list" if batch is None else "batch")
            PROBE.records[self.name].extend(got)
            PROBE.mismatches[self.name].extend(problems)

    @staticmethod
    def _compare(batch: SinkRecordBatch, got: list[SinkRecord]) -> list[str]:
        """The columns must describe exactly the records (string converters, clean batch)."""
        if not batch.converts_cleanly():
            return ["batch does not convert cleanly"]
        if len(got) != batch.message_count:
            return [f"{len(got)} records for {batch.message_count} messages"]
        problems = []
        for i, r in enumerate(got):
            value, key = batch.values[i], batch.keys[i]
            raw = (r.topic, r.partition, r.offset, r.value, r.key, r.timestamp)
            col = (batch.topics[i], batch.partitions[i], batch.offsets[i],
                   None if value is None else value.decode(),
                   None if key is None else key.decode(), batch.timestamps[i][1])  # fmt: skip
            headers = [(h.key, h.value) for h in r.headers]
            converted = [
                (k, batch.convert_header(r.topic, k, v)) for k, v in batch.headers[i] or ()
            ]
            if raw != col or headers != converted:
                problems.append(f"{raw} {headers} != {col} {converted}")
        return problems

    def stop(self) -> None:
        pass


class ProbeSink(SinkConnector):
    name = "batch-probe"
    config_model = ProbeConfig

    def start(self, config: Any) -> None:
        self.raw = config.raw()

    @classmethod
    def task_class(cls) -> type[Any]:
        return ProbeTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [{**self.raw, "connector": self.raw["name"]}]


class ProbePlugin:
    @hookimpl
    def sluice_connectors(self) -> list[type[Any]]:
        return [ProbeSink]


@pytest.fixture
def herder(hub_broker: EmbeddedBroker, tmp_path: Path) -> Iterator[Herder]:
    settings = worker_settings(hub_broker.bootstrap, f"batch-{uuid.uuid4().hex[:8]}",
                               **{"task.restart.backoff.ms": 60_000,
                                  "file.allowed.paths": str(tmp_path)})  # fmt: skip
    registry = create_plugin_manager([SamplePlugin(), ProbePlugin()], load_entrypoints=False)
    started = Herder(WorkerConfig.from_mapping(settings), registry=registry)
    started.start()
    yield started
    started.stop()


def produce(
    hub_broker: EmbeddedBroker,
    topic: str,
    messages: list[tuple[bytes | None, list[tuple[str, bytes]] | None]],
    partitions: int = 1,
    keys: bool = False,
) -> None:
    """Round-robin over ``partitions``; with ``keys`` every third message has a text key."""
    producer = Producer({"bootstrap.servers": hub_broker.bootstrap})
    for i, (value, headers) in enumerate(messages):
        key = b"k%d" % i if keys and i % 3 == 0 else None
        producer.produce(topic, value=value, key=key, headers=headers, partition=i % partitions)
    assert producer.flush(10) == 0


def create_topic(hub_broker: EmbeddedBroker, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": hub_broker.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)


def seen(name: str) -> int:
    with PROBE.lock:
        return len(PROBE.records[name])


def warm_up(
    hub_broker: EmbeddedBroker, topic: str, partitions: int, wait: Callable[[], bool]
) -> None:
    """A topic's first poll takes the record-by-record path (it registers the topic); the
    rest, produced once that poll was delivered, reaches ``put`` as batches."""
    produce(hub_broker, topic, [(b"warm-up", None)] * partitions, partitions)
    wait_until(wait, 20, "the warm-up records")


def test_batches_match_their_records_and_offsets_commit(
    hub_broker: EmbeddedBroker, herder: Herder, topic_name: str
) -> None:
    name = topic_name
    create_topic(hub_broker, topic_name, 3)
    config = {"connector.class": "batch-probe", "topics": topic_name,
              "key.converter": STRING, "value.converter": STRING}  # fmt: skip
    herder.create_connector(name, config)
    warm_up(hub_broker, topic_name, 3, lambda: seen(name) >= 3)
    messages = [(b"v%d" % i, [("n", b"%d" % i), ("tag", b"x"), ("f", b"1.5")]) for i in range(600)]
    messages += [(None, None), (b"", [("n", b"null")])]
    produce(hub_broker, topic_name, messages, 3, keys=True)
    wait_until(lambda: seen(name) >= 605, 20, "all records")
    with PROBE.lock:
        values = sorted(r.value for r in PROBE.records[name] if r.value and r.value[0] == "v")
        assert values == sorted(f"v{i}" for i in range(600))
        assert PROBE.mismatches[name] == []
        assert "batch" in PROBE.kinds[name]
    ends = {(topic_name, p): (1 + 602 // 3 + (1 if p < 602 % 3 else 0)) for p in range(3)}
    wait_until(lambda: committed(herder, name) == ends, 10, "commits of every partition's end")


def test_transforms_get_a_plain_list(
    hub_broker: EmbeddedBroker, herder: Herder, topic_name: str
) -> None:
    name = topic_name
    config = {"connector.class": "batch-probe", "topics": topic_name, "key.converter": STRING,
              "value.converter": STRING, **KEEP_ALL}  # fmt: skip
    herder.create_connector(name, config)
    warm_up(hub_broker, topic_name, 1, lambda: seen(name) >= 1)
    produce(hub_broker, topic_name, [(b'{"i": %d}' % i, None) for i in range(50)])
    wait_until(lambda: seen(name) >= 51, 20, "all records")
    with PROBE.lock:
        assert set(PROBE.kinds[name]) == {"list"}


def test_a_sink_reading_columns_never_gets_records_built(
    hub_broker: EmbeddedBroker, herder: Herder, topic_name: str
) -> None:
    """Nothing after ``put`` builds the records a sink did not ask for (the put metric once
    did, with ``len``: 2.5x the CPU per message of the file sink), and that metric still
    counts every record."""
    from prometheus_client.exposition import generate_latest

    from hub.rest.metrics import registry_for
    from tests.fixtures.prometheus import parse, value

    name = topic_name
    herder.create_connector(name, {"connector.class": "batch-probe", "topics": topic_name,
                                   "value.converter": STRING, "mode": "columns"})  # fmt: skip
    warm_up(hub_broker, topic_name, 1, lambda: PROBE.messages[name] >= 1)
    produce(hub_broker, topic_name, [(b"v%d" % i, [("n", b"%d" % i)]) for i in range(300)])
    sent = "kafka_connect_sink_task_metrics_sink_record_send_total"
    wait_until(
        lambda: value(parse(generate_latest(registry_for(herder)).decode()), sent,
                      connector=name, task="0") == 301,
        20, "301 records counted as put",
    )  # fmt: skip
    with PROBE.lock:
        assert PROBE.messages[name] == 301
        assert PROBE.batches[name], "no poll reached put as a batch"
        assert not [b for b in PROBE.batches[name] if b.materialised]


@pytest.mark.parametrize("mode", ["ignore", "swallow", "retry"])
def test_a_sink_that_does_not_look_still_fails_on_an_intolerable_record(
    hub_broker: EmbeddedBroker, herder: Herder, topic_name: str, mode: str
) -> None:
    name = topic_name
    herder.create_connector(name, {"connector.class": "batch-probe", "topics": topic_name,
                                   "value.converter": STRING, "mode": mode})  # fmt: skip
    # the first poll goes the eager way; wait until it is committed, then send a bad batch
    produce(hub_broker, topic_name, [(b"fine", None)])
    wait_until(lambda: committed(herder, name) == {(topic_name, 0): 1}, 20, "the first commit")
    produce(hub_broker, topic_name, [(b"ok", None), (b"\xff not utf-8", None), (b"ok", None)])
    failed = wait_until(lambda: (t := task_state(herder, name))["state"] == "FAILED" and t, 20,
                        "FAILED")  # fmt: skip
    assert "Tolerance exceeded" in failed["trace"]
    assert committed(herder, name) == {(topic_name, 0): 1}  # the failed batch is not committed


def test_a_sink_that_does_not_look_still_reports_to_the_dlq(
    hub_broker: EmbeddedBroker, herder: Herder, topic_name: str
) -> None:
    name, dlq = topic_name, f"{topic_name}-dlq"
    herder.create_connector(name, {"connector.class": "batch-probe", "topics": topic_name,
                                   "value.converter": STRING, "mode": "ignore",
                                   "errors.tolerance": "all",
                                   "errors.deadletterqueue.topic.name": dlq})  # fmt: skip
    produce(hub_broker, topic_name, [(b"fine", None)])
    wait_until(lambda: committed(herder, name) == {(topic_name, 0): 1}, 20, "the first commit")
    produce(hub_broker, topic_name, [(b"ok", None), (b"\xff bad", None), (b"ok", None)])
    dead = wait_until(lambda: (m := read_topic(hub_broker.bootstrap, dlq)) and m, 20, "the DLQ")
    assert [m.value() for m in dead] == [b"\xff bad"]
    wait_until(lambda: committed(herder, name) == {(topic_name, 0): 4}, 20, "commit past it")


def file_headers(stream: bytes, seq: int) -> list[tuple[str, bytes]]:
    return [("file.path", b"/var/log/x.log"), ("file.host", b"h"), ("file.stream", stream),
            ("file.offset", b"%d" % (seq * 10)), ("file.seq", b"%d" % seq)]  # fmt: skip


def sidecar_offset(path: Path, topic: str) -> int:
    side = Path(sidecar_path(str(path)))
    if not side.exists():
        return -1
    return int(json.loads(side.read_text()).get("offsets", {}).get(f"{topic}/0", -1))


@pytest.mark.parametrize(
    "value_converter", [STRING, "org.apache.kafka.connect.converters.ByteArrayConverter"]
)
def test_file_sink_writes_the_same_through_batches_and_records(
    hub_broker: EmbeddedBroker, herder: Herder, topic_name: str, tmp_path: Path,
    value_converter: str,
) -> None:  # fmt: skip
    """Two file sinks on one topic: one gets batches (raw columns), one records (a no-op
    transform); files and sidecars must be byte-identical, and so must their DLQs."""
    outputs = {"batches": tmp_path / "batches.out", "records": tmp_path / "records.out"}
    for kind, path in outputs.items():
        herder.create_connector(f"{topic_name}-{kind}", {
            "connector.class": "FileStreamSink", "topics": topic_name, "file": str(path),
            "value.converter": value_converter, "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": f"{topic_name}-{kind}-dlq",
            **(KEEP_ALL if kind == "records" else {}),
        })  # fmt: skip
    produce(hub_broker, topic_name, [(b"first", file_headers(b"s1", 1))])
    wait_until(lambda: all(sidecar_offset(p, topic_name) == 1 for p in outputs.values()), 20,
               "the first line durable in both")  # fmt: skip
    messages: list[tuple[bytes | None, list[tuple[str, bytes]] | None]] = [
        (b"line %d" % n, file_headers(b"s1", n)) for n in range(2, 400)
    ]
    messages += [(b"line %d" % n, file_headers(b"s1", n)) for n in range(390, 410)]  # re-sent
    messages += [(None, None), (b"no headers", None), (b"bad \xff utf-8", file_headers(b"s1", 410)),
                 (b"", [("other", b"1")]), (b"stream 2", file_headers(b"s2", 1)),
                 (b"caf\xc3\xa9", file_headers(b"s1", 411)),
                 (b"again", file_headers(b"s2", 1))]  # fmt: skip
    messages += [(b"tail %d" % n, file_headers(b"s2", n)) for n in range(2, 300)]
    produce(hub_broker, topic_name, messages)
    end = 1 + len(messages)
    wait_until(lambda: all(sidecar_offset(p, topic_name) == end for p in outputs.values()), 30,
               "every record durable in both")  # fmt: skip
    herder.delete_connector(f"{topic_name}-batches")
    herder.delete_connector(f"{topic_name}-records")
    batches, records = (p.read_bytes() for p in outputs.values())
    assert batches == records
    side = [Path(sidecar_path(str(p))).read_bytes() for p in outputs.values()]
    assert side[0] == side[1]
    lines = batches.split(b"\n")
    assert lines[:3] == [b"first", b"line 2", b"line 3"]
    assert lines.count(b"line 395") == 1 and b"again" not in lines
    assert b"null" in lines and b"no headers" in lines and b"" in lines[:-1]
    if value_converter == STRING:  # invalid UTF-8 fails StringConverter: tolerated, DLQ'd
        assert not any(line.startswith(b"bad") for line in lines)
        for kind in outputs:
            dead = read_topic(hub_broker.bootstrap, f"{topic_name}-{kind}-dlq")
            assert [m.value() for m in dead] == [b"bad \xff utf-8"]
    else:  # bytes are written as UTF-8 text with U+FFFD
        assert "bad \ufffd utf-8".encode() in lines
