"""Task failures, automatic restarts with backoff, errors.tolerance and dead-letter queues."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from hub.runtime.herder import Herder
from sluice.embedded_broker import EmbeddedBroker
from tests.fixtures.broker import wait_until
from tests.hub.runtime.conftest import read_topic
from tests.hub.runtime.sample_plugins import STATE
from tests.hub.runtime.test_sink import produce, received


def task_state(herder: Herder, name: str) -> dict:
    tasks = herder.connector_status(name)["tasks"]
    return tasks[0] if tasks else {"state": "NONE"}


def test_failed_task_is_isolated_and_restarted_with_backoff(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str
) -> None:
    herder = herder_factory(**{"task.restart.backoff.ms": 300, "task.restart.max.backoff.ms": 5000})
    healthy, flaky = f"{name}-ok", f"{name}-flaky"
    herder.create_connector(
        flaky, {"connector.class": "counter", "topic": flaky, "count": "50", "fail_times": "2"}
    )
    herder.create_connector(
        healthy, {"connector.class": "counter", "topic": healthy, "count": "500", "batch": "5",
                  "poll_delay_ms": "2"},
    )  # fmt: skip
    failed = wait_until(
        lambda: (t := task_state(herder, flaky))["state"] == "FAILED" and t, 10, "FAILED"
    )
    assert "counter task failing on purpose" in failed["trace"]
    assert "RuntimeError" in failed["trace"]
    assert herder.connector_status(flaky)["connector"]["state"] == "RUNNING"
    # the other connector is untouched and keeps flowing meanwhile
    assert task_state(herder, healthy)["state"] == "RUNNING"
    wait_until(lambda: len(read_topic(hub_broker.bootstrap, healthy)) >= 500, 20, "healthy data")
    # two failures, then the third start succeeds and delivers everything
    wait_until(lambda: task_state(herder, flaky)["state"] == "RUNNING", 10, "auto restart")
    wait_until(lambda: len(read_topic(hub_broker.bootstrap, flaky)) >= 50, 20, "flaky data")
    assert STATE.starts[flaky] == 3
    assert "trace" not in task_state(herder, flaky)


def test_restart_api_only_failed(herder_factory: Callable[..., Herder], name: str) -> None:
    herder = herder_factory(**{"task.restart.backoff.ms": 60_000})
    herder.create_connector(
        name, {"connector.class": "counter", "topic": name, "fail_times": "1000"}
    )
    wait_until(lambda: task_state(herder, name)["state"] == "FAILED", 10, "FAILED")
    assert herder.restart_connector(name, include_tasks=False, only_failed=True) is None
    starts = STATE.starts[name]
    snapshot = herder.restart_connector(name, include_tasks=True, only_failed=True)
    assert snapshot is not None
    assert snapshot["connector"]["state"] == "RUNNING"  # only failed instances restart
    assert snapshot["tasks"][0]["state"] == "RESTARTING"
    wait_until(lambda: STATE.starts[name] == starts + 1, 10, "task restarted")
    wait_until(lambda: task_state(herder, name)["state"] == "FAILED", 10, "FAILED again")
    herder.restart_task(name, 0)
    wait_until(lambda: STATE.starts[name] == starts + 2, 10, "manual task restart")


def _headers(msg) -> dict[str, str]:
    return {k: v.decode() for k, v in (msg.headers() or [])}


def test_sink_dead_letter_queue_with_context_headers(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    dlq = f"{topic_name}-dlq"
    produce(hub_broker, topic_name, [{"i": 0}, b"not json", {"i": 2}, b"{broken", {"i": 4}], 1)
    herder = herder_factory()
    herder.create_connector(
        name,
        {"connector.class": "recording", "topics": topic_name, "errors.tolerance": "all",
         "errors.log.enable": "true", "errors.log.include.messages": "true",
         "errors.deadletterqueue.topic.name": dlq,
         "errors.deadletterqueue.context.headers.enable": "true"},
    )  # fmt: skip
    wait_until(lambda: len(received(name)) >= 3, 20, "good records")
    assert received(name) == [{"i": 0}, {"i": 2}, {"i": 4}]
    dead = wait_until(lambda: len(m := read_topic(hub_broker.bootstrap, dlq)) >= 2 and m, 10, "DLQ")
    assert [m.value() for m in dead] == [b"not json", b"{broken"]
    headers = _headers(dead[0])
    assert headers["__connect.errors.topic"] == topic_name
    assert headers["__connect.errors.partition"] == "0"
    assert headers["__connect.errors.offset"] == "1"
    assert headers["__connect.errors.connector.name"] == name
    assert headers["__connect.errors.task.id"] == "0"
    assert headers["__connect.errors.stage"] == "VALUE_CONVERTER"
    assert headers["__connect.errors.class.name"] == "JsonConverter"
    assert headers["__connect.errors.exception.class.name"].endswith("DataError")
    assert "malformed JSON" in headers["__connect.errors.exception.message"]
    assert "Traceback" in headers["__connect.errors.exception.stacktrace"]
    assert _headers(dead[1])["__connect.errors.offset"] == "3"
    assert task_state(herder, name)["state"] == "RUNNING"


def test_sink_errant_record_reporter_writes_the_dlq(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    dlq = f"{topic_name}-dlq"
    produce(hub_broker, topic_name, [{"i": 0}, {"bad": 1}, {"i": 2}], 1)
    herder = herder_factory()
    herder.create_connector(
        name,
        {"connector.class": "recording", "topics": topic_name, "report_bad": "true",
         "errors.tolerance": "all", "errors.log.enable": "true",
         "errors.deadletterqueue.topic.name": dlq,
         "errors.deadletterqueue.context.headers.enable": "true"},
    )  # fmt: skip
    wait_until(lambda: len(received(name)) >= 2, 20, "good records")
    dead = wait_until(lambda: len(m := read_topic(hub_broker.bootstrap, dlq)) >= 1 and m, 10, "DLQ")
    assert [json.loads(m.value()) for m in dead] == [{"bad": 1}]  # the original bytes
    headers = _headers(dead[0])
    assert headers["__connect.errors.topic"] == topic_name
    assert headers["__connect.errors.partition"] == "0"
    assert headers["__connect.errors.offset"] == "1"
    assert headers["__connect.errors.stage"] == "TASK_PUT"
    assert headers["__connect.errors.class.name"] == "RecordingTask"
    assert headers["__connect.errors.exception.class.name"] == "builtins.ValueError"
    assert headers["__connect.errors.exception.message"] == "cannot write {'bad': 1}"
    # the task keeps running and keeps delivering
    produce(hub_broker, topic_name, [{"i": 3}, {"bad": 4}, {"i": 5}])
    wait_until(lambda: len(received(name)) >= 4, 20, "later records")
    assert received(name) == [{"i": 0}, {"i": 2}, {"i": 3}, {"i": 5}]
    wait_until(lambda: len(read_topic(hub_broker.bootstrap, dlq)) >= 2, 10, "second DLQ record")
    assert task_state(herder, name)["state"] == "RUNNING"


def test_sink_errant_record_with_tolerance_none_fails_the_task(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    produce(hub_broker, topic_name, [{"i": 0}, {"bad": 1}], 1)
    herder = herder_factory(**{"task.restart.backoff.ms": 60_000})
    herder.create_connector(
        name, {"connector.class": "recording", "topics": topic_name, "report_bad": "true"}
    )
    failed = wait_until(
        lambda: (t := task_state(herder, name))["state"] == "FAILED" and t, 20, "FAILED"
    )
    assert "Tolerance exceeded" in failed["trace"]
    assert "cannot write {'bad': 1}" in failed["trace"]


def test_sink_tolerance_none_fails_the_task(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    produce(hub_broker, topic_name, [{"i": 0}, b"not json"], 1)
    herder = herder_factory(**{"task.restart.backoff.ms": 60_000})
    herder.create_connector(name, {"connector.class": "recording", "topics": topic_name})
    failed = wait_until(
        lambda: (t := task_state(herder, name))["state"] == "FAILED" and t, 20, "FAILED"
    )
    assert "Tolerance exceeded" in failed["trace"]


def test_source_dead_letter_queue(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    dlq = f"{topic_name}-dlq"
    herder = herder_factory()
    herder.create_connector(
        name,
        {"connector.class": "poison-source", "topic": topic_name, "count": "30",
         "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
         "errors.deadletterqueue.context.headers.enable": "true"},
    )  # fmt: skip
    good = wait_until(
        lambda: len(m := read_topic(hub_broker.bootstrap, topic_name)) >= 20 and m, 20, "records"
    )
    assert [json.loads(m.value())["n"] for m in good] == [n for n in range(1, 31) if n % 3]
    dead = wait_until(
        lambda: len(m := read_topic(hub_broker.bootstrap, dlq)) >= 10 and m, 10, "DLQ"
    )
    headers = _headers(dead[0])
    assert headers["__connect.errors.topic"] == topic_name
    assert headers["__connect.errors.stage"] == "VALUE_CONVERTER"
    assert headers["__connect.errors.connector.name"] == name
    assert json.loads(dead[0].value()) == {"bad": "unserialisable"}
    # skipped records still advance the committed source offset
    wait_until(
        lambda: (
            herder.connector_offsets(name)["offsets"]
            == [{"partition": {"p": 0}, "offset": {"n": 30}}]
        ),
        10,
        "offsets through the last record",
    )


def test_transform_failures_are_tolerated_on_both_sides(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    """Flatten$Value raises DataError on a non-object value: stage TRANSFORMATION in the DLQ."""
    herder = herder_factory()
    source_dlq, sink_dlq = f"{topic_name}-sdlq", f"{topic_name}-kdlq"
    flatten = {
        "transforms": "flat",
        "transforms.flat.type": "Flatten$Value",
        "errors.tolerance": "all",
        "errors.deadletterqueue.context.headers.enable": "true",
    }
    herder.create_connector(
        f"{name}-src",
        {"connector.class": "poison-source", "topic": topic_name, "count": "9", "poison": "string",
         "errors.deadletterqueue.topic.name": source_dlq, **flatten},
    )  # fmt: skip
    dead = wait_until(
        lambda: len(m := read_topic(hub_broker.bootstrap, source_dlq)) >= 3 and m, 20, "source DLQ"
    )
    assert [json.loads(m.value()) for m in dead] == ["poison"] * 3
    assert {_headers(m)["__connect.errors.stage"] for m in dead} == {"TRANSFORMATION"}
    good = wait_until(
        lambda: len(m := read_topic(hub_broker.bootstrap, topic_name)) >= 6 and m, 10, "records"
    )
    assert [json.loads(m.value())["n"] for m in good] == [1, 2, 4, 5, 7, 8]

    produce(hub_broker, f"{topic_name}-in", [{"a": {"b": 1}}, "flat?", {"c": 2}], 1)
    herder.create_connector(
        f"{name}-sink",
        {"connector.class": "recording", "topics": f"{topic_name}-in",
         "errors.deadletterqueue.topic.name": sink_dlq, **flatten},
    )  # fmt: skip
    wait_until(lambda: len(received(f"{name}-sink")) >= 2, 20, "flattened records")
    assert received(f"{name}-sink") == [{"a.b": 1}, {"c": 2}]
    dead = wait_until(
        lambda: len(m := read_topic(hub_broker.bootstrap, sink_dlq)) >= 1 and m, 10, "sink DLQ"
    )
    assert dead[0].value() == b'"flat?"'
    assert _headers(dead[0])["__connect.errors.stage"] == "TRANSFORMATION"
    assert _headers(dead[0])["__connect.errors.offset"] == "1"


def test_warehouse_sink_reports_a_bad_record_to_the_dlq(
    hub_broker: EmbeddedBroker,
    herder_factory: Callable[..., Herder],
    name: str,
    topic_name: str,
    tmp_path: Path,
) -> None:
    """The warehouse sink finds its errant-record reporter in the real runtime."""
    dlq, db = f"{topic_name}-dlq", tmp_path / "wh.db"
    produce(hub_broker, topic_name, [{"id": 1}, 5, {"id": 3}], 1)
    herder = herder_factory(**{"file.allowed.paths": str(tmp_path)})  # the SQLite file's home
    herder.create_connector(
        name,
        {"connector.class": "warehouse-sink", "topics": topic_name,
         "connection.url": f"jdbc:sqlite:{db}", "auto.create": "true",
         "table.name.format": "t", "errors.tolerance": "all",
         "errors.deadletterqueue.topic.name": dlq,
         "errors.deadletterqueue.context.headers.enable": "true"},
    )  # fmt: skip
    dead = wait_until(lambda: len(m := read_topic(hub_broker.bootstrap, dlq)) >= 1 and m, 20, "DLQ")
    assert [m.value() for m in dead] == [b"5"]
    headers = _headers(dead[0])
    assert headers["__connect.errors.offset"] == "1"
    assert headers["__connect.errors.stage"] == "TASK_PUT"
    assert task_state(herder, name)["state"] == "RUNNING"

    def rows() -> list[int]:
        try:
            with sqlite3.connect(db) as conn:
                return sorted(r[0] for r in conn.execute("SELECT id FROM t"))
        except sqlite3.Error:
            return []

    wait_until(lambda: rows() == [1, 3], 20, "good rows")
