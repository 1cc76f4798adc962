"""Exactly-once source connectors (KIP-618) with the worker's exactly.once.source.support on:
records and offsets in one transaction, across kill -9 of the worker (sample counter and the
file source), transaction boundaries (interval, connector-defined with an abort), the
connector's own offsets topic, fencing of removed tasks, and validation of the keys."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException, Producer

from hub.runtime.config import WorkerConfig
from hub.runtime.validation import connector_errors
from hub.runtime.worker import connector_class
from sluice.embedded_broker import EmbeddedBroker
from tests.broker.transaction.helpers import end_offsets, read_all
from tests.fixtures.broker import wait_until
from tests.hub.runtime.conftest import worker_settings
from tests.hub.runtime.sample_plugins import sample_registry
from tests.hub.runtime.test_crash import WorkerProcess

EOS = {"exactly.once.source.support": "enabled"}


def lso(bootstrap: str, topic: str) -> int:
    """The topic's last stable offset, -1 before the topic exists."""
    try:
        return end_offsets(bootstrap, topic)[0]
    except KafkaException:
        return -1


def committed_numbers(bootstrap: str, topic: str) -> list[int]:
    return [json.loads(v)["n"] for _, _, _, v in read_all(bootstrap, topic)]  # type: ignore[arg-type]


@pytest.mark.slow  # the file source's kill -9 test covers the same path by default (~15 s)
def test_counter_source_is_exactly_once_across_kill_9(
    hub_broker: EmbeddedBroker, tmp_path: Path, topic_name: str
) -> None:
    n = 10_000
    settings = worker_settings(hub_broker.bootstrap, f"eos-{topic_name}", **EOS)
    connectors = {topic_name: {"connector.class": "counter", "topic": topic_name,
                               "count": str(n), "batch": "20", "poll_delay_ms": "10",
                               "exactly.once.support": "requested"}}  # fmt: skip
    worker = WorkerProcess(tmp_path, settings, connectors)
    worker.start()
    wait_until(lambda: lso(hub_broker.bootstrap, topic_name) > 1500, 60,
               "records before the kill")  # fmt: skip
    assert worker.end(9) == -9
    assert len(committed_numbers(hub_broker.bootstrap, topic_name)) < n, "finished too early"
    worker.start()
    wait_until(lambda: len(committed_numbers(hub_broker.bootstrap, topic_name)) >= n, 90, "all")
    assert worker.end(15) == 0
    got = committed_numbers(hub_broker.bootstrap, topic_name)
    assert collections.Counter(got) == collections.Counter(range(1, n + 1))  # once each


def test_file_source_is_exactly_once_across_kill_9(
    hub_broker: EmbeddedBroker, tmp_path: Path, topic_name: str
) -> None:
    lines = 20_000
    source = tmp_path / "app.log"
    source.write_text("".join(f"line {i:06d}\n" for i in range(lines)))
    settings = worker_settings(hub_broker.bootstrap, f"eos-{topic_name}", **EOS, **{
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "file.allowed.paths": str(tmp_path),
    })  # fmt: skip
    connectors = {topic_name: {"connector.class": "FileStreamSource", "file": str(source),
                               "topic": topic_name, "batch.size": "10",
                               "exactly.once.support": "required"}}  # fmt: skip
    worker = WorkerProcess(tmp_path, settings, connectors)

    def committed() -> list[bytes | None]:
        return [v for _, _, _, v in read_all(hub_broker.bootstrap, topic_name)]

    worker.start()
    wait_until(lambda: lso(hub_broker.bootstrap, topic_name) > 1000, 60,
               "lines before the kill")  # fmt: skip
    assert worker.end(9) == -9
    with source.open("a") as f:  # the file keeps growing while the hub is down
        f.write("".join(f"line {i:06d}\n" for i in range(lines, lines + 500)))
    worker.start()
    wait_until(lambda: len(committed()) >= lines + 500, 120, "every line")
    assert worker.end(15) == 0
    got = committed()
    assert collections.Counter(got) == collections.Counter(
        f"line {i:06d}".encode() for i in range(lines + 500)
    )  # zero duplicates, zero losses
    assert got == sorted(got)  # and in file order


def test_interval_boundary_commits_on_time(herder_factory: Any, hub_broker: EmbeddedBroker,
                                           name: str) -> None:  # fmt: skip
    herder = herder_factory(**EOS)
    herder.create_connector(name, {"connector.class": "counter", "topic": name, "count": "300",
                                   "batch": "10", "poll_delay_ms": "5",
                                   "transaction.boundary": "interval",
                                   "transaction.boundary.interval.ms": "200"})  # fmt: skip
    wait_until(lambda: len(committed_numbers(hub_broker.bootstrap, name)) == 300, 30, "all")
    herder.stop()
    assert committed_numbers(hub_broker.bootstrap, name) == list(range(1, 301))


def test_connector_defined_boundaries_and_an_abort(
    herder_factory: Any, hub_broker: EmbeddedBroker, name: str
) -> None:
    herder = herder_factory(**EOS)
    herder.create_connector(name, {"connector.class": "txn-counter", "topic": name,
                                   "count": "200", "batch": "10", "commit_every": "30",
                                   "abort_from": "101", "transaction.boundary": "connector",
                                   "exactly.once.support": "required"})  # fmt: skip
    # commits after 30, 60, 90, ...; the batch holding 101 aborts the open transaction
    # (91-110); 181-200 stay open until the stop
    wanted = [n for n in range(1, 181) if not 91 <= n <= 110]
    wait_until(lambda: committed_numbers(hub_broker.bootstrap, name) == wanted, 30, "commits")
    herder.stop()  # a graceful stop commits the open transaction
    assert committed_numbers(hub_broker.bootstrap, name) == [
        n for n in range(1, 201) if not 91 <= n <= 110
    ]
    # an aborted transaction's offsets are still committed (Kafka's rule): here the abort is
    # the last thing the task does, and the offset moves past the discarded records anyway
    herder = herder_factory(**EOS)
    other = f"{name}-2"
    herder.create_connector(other, {"connector.class": "txn-counter", "topic": other,
                                    "count": "110", "batch": "10", "commit_every": "30",
                                    "abort_from": "101", "transaction.boundary": "connector"})  # fmt: skip  # noqa: E501
    wait_until(lambda: herder.connector_offsets(other)["offsets"]
               == [{"partition": {"p": 0}, "offset": {"n": 110}}], 30, "the offsets")  # fmt: skip
    assert committed_numbers(hub_broker.bootstrap, other) == list(range(1, 91))


def test_the_connectors_own_offsets_topic(herder_factory: Any, hub_broker: EmbeddedBroker,
                                          name: str) -> None:  # fmt: skip
    herder = herder_factory(**EOS)
    own = f"{name}-offsets"
    herder.create_connector(name, {"connector.class": "counter", "topic": name, "count": "50",
                                   "offsets.storage.topic": own})  # fmt: skip
    wait_until(lambda: len(committed_numbers(hub_broker.bootstrap, name)) == 50, 30, "all")
    wait_until(lambda: herder.connector_offsets(name)["offsets"]
               == [{"partition": {"p": 0}, "offset": {"n": 50}}], 30, "the offset")  # fmt: skip
    keys = {k for _, _, k, _ in read_all(hub_broker.bootstrap, own, 5)}
    assert keys == {json.dumps([name, {"p": 0}], separators=(",", ":")).encode()}
    herder.stop()


def test_removed_tasks_are_fenced(herder_factory: Any, hub_broker: EmbeddedBroker,
                                  name: str) -> None:  # fmt: skip
    herder = herder_factory(**EOS)
    group = herder.config.group_id
    zombie = Producer({"bootstrap.servers": hub_broker.bootstrap,
                       "transactional.id": f"{group}-{name}-1", "log_level": 0})  # fmt: skip
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(name, b"left open by a task that no longer exists")
    zombie.flush(30)
    assert end_offsets(hub_broker.bootstrap, name) == (0, 1)
    herder.worker.fence_zombies(name, range(1, 2))
    wait_until(lambda: end_offsets(hub_broker.bootstrap, name) == (2, 2), 30, "the abort")
    assert read_all(hub_broker.bootstrap, name) == []


@pytest.mark.parametrize(
    ("worker", "config", "field", "reason"),
    [
        ({}, {"exactly.once.support": "required"}, "exactly.once.support",
         "exactly.once.source.support=disabled"),
        (EOS, {"exactly.once.support": "required"}, "exactly.once.support",
         "does not say it supports"),
        (EOS, {"exactly.once.support": "sometimes"}, "exactly.once.support", "must be"),
        (EOS, {"transaction.boundary": "connector"}, "transaction.boundary", "cannot define"),
        (EOS, {"transaction.boundary.interval.ms": "100"}, "transaction.boundary.interval.ms",
         "only used with"),
        (EOS, {"offsets.storage.topic": "bad topic!"}, "offsets.storage.topic", "not a legal"),
    ],
)  # fmt: skip
def test_validation_of_the_exactly_once_keys(
    worker: dict[str, str], config: dict[str, str], field: str, reason: str
) -> None:
    registry = sample_registry()
    settings = WorkerConfig.from_mapping(worker)
    full = {"name": "c", "connector.class": "counter", "topic": "t", **config}
    errors = connector_errors(registry, settings, connector_class(registry, full), full)
    assert any(reason in r for r in errors.get(field, [])), errors


def test_builtin_sources_declare_their_support() -> None:
    registry = sample_registry()
    settings = WorkerConfig.from_mapping(EOS)

    def errors(config: dict[str, str]) -> dict[str, list[str]]:
        full = {"name": "c", "exactly.once.support": "required", **config}
        return connector_errors(registry, settings, connector_class(registry, full), full)

    assert "exactly.once.support" not in errors(
        {"connector.class": "file-source", "file": "/tmp/x", "topic": "t"})  # fmt: skip
    assert "exactly.once.support" in errors(
        {"connector.class": "file-source", "file": "/tmp/x", "topic": "t", "read.from": "end"}
    )
    cdc = {"connector.class": "postgres-cdc", "database.hostname": "h", "database.user": "u",
           "database.dbname": "d", "topic.prefix": "p"}  # fmt: skip
    assert "exactly.once.support" in errors(cdc)  # an initial snapshot under poll boundaries
    assert "exactly.once.support" not in errors({**cdc, "transaction.boundary": "connector"})
    assert "exactly.once.support" not in errors({**cdc, "snapshot.mode": "never"})
    sink = {"connector.class": "file-sink", "file": "/tmp/y", "topics": "t",
            "offsets.storage.topic": "x"}  # fmt: skip
    full = {"name": "s", **sink}
    assert "offsets.storage.topic" in connector_errors(
        registry, settings, connector_class(registry, full), full
    )
