"""Broker-free units: worker config parsing, error handling policy, committable offsets."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hub.api import ConfigError, DataError, RetriableError, SourceRecord
from hub.runtime.config import WorkerConfig
from hub.runtime.error_handling import (
    ErrorHandlingConfig,
    FailureContext,
    RetryWithToleranceOperator,
    ToleranceExceededError,
)
from hub.runtime.errors import WorkerConfigError
from hub.runtime.submitted_records import SubmittedRecords
from sluice.logs import librdkafka_logger


def test_worker_config_from_properties(tmp_path: Path) -> None:
    path = tmp_path / "worker.properties"
    path.write_text(
        "# Kafka Connect worker file\n"
        "bootstrap.servers=kafka:9092\n"
        "offset.flush.interval.ms = 500\n"
        "value.converter.schemas.enable=false\n"
        "producer.linger.ms: 20\n"
    )
    config = WorkerConfig.from_file(path, **{"rest.port": 9000})
    assert config.bootstrap_servers == "kafka:9092"
    assert config.offset_flush_interval_ms == 500
    assert config.rest_port == 9000 and config.worker_id == "127.0.0.1:9000"
    assert config.prefixed("value.converter.") == {"schemas.enable": "false"}
    assert config.client_config("producer") == {
        "bootstrap.servers": "kafka:9092",
        "logger": librdkafka_logger(),  # librdkafka's lines through ours, throttled
        "linger.ms": "20",
    }
    assert config.config_storage_topic == "sluice-connect-configs"
    assert config.raw()["offset.storage.partitions"] == 5


def test_worker_id_names_an_address_other_workers_can_reach() -> None:
    # Kafka Connect advertises this machine's address when the REST server binds a wildcard, so
    # replicas of one container need no per-replica rest.advertised.host.name.
    import socket

    bound_everywhere = WorkerConfig.model_validate({"rest.host.name": "0.0.0.0", "rest.port": 8083})
    machine = socket.gethostbyname(socket.gethostname())
    assert bound_everywhere.worker_id == f"{machine}:8083"
    named = WorkerConfig.model_validate(
        {"rest.host.name": "0.0.0.0", "rest.advertised.host.name": "worker-7", "rest.port": 8083}
    )
    assert named.worker_id == "worker-7:8083"
    bound = WorkerConfig.model_validate({"rest.host.name": "127.0.0.2", "rest.port": 8083})
    assert bound.worker_id == "127.0.0.2:8083"


def test_worker_config_names_each_bad_key(tmp_path: Path) -> None:
    path = tmp_path / "worker.properties"
    path.write_text("offset.flush.interval.ms=abc\nrest.port=x\noffset.storage.partitions=0\n")
    with pytest.raises(WorkerConfigError) as caught:
        WorkerConfig.from_file(path)
    assert caught.value.errors == {
        "offset.flush.interval.ms": [
            "Input should be a valid integer, unable to parse string as an integer (got 'abc')"
        ],
        "rest.port": [
            "Input should be a valid integer, unable to parse string as an integer (got 'x')"
        ],
        "offset.storage.partitions": ["Input should be greater than 0 (got '0')"],
    }
    (tmp_path / "w.json").write_text("[1]")
    with pytest.raises(WorkerConfigError, match="must hold a JSON object"):
        WorkerConfig.from_file(tmp_path / "w.json")
    with pytest.raises(WorkerConfigError, match="cannot read worker config"):
        WorkerConfig.from_file(tmp_path / "missing.properties")


def test_error_config_rejects_bad_values() -> None:
    with pytest.raises(ConfigError) as exc:
        ErrorHandlingConfig.from_connector_config(
            {"errors.tolerance": "most", "errors.retry.timeout": "soon", "errors.log.enable": "y"}
        )
    assert set(exc.value.errors) == {
        "errors.tolerance",
        "errors.retry.timeout",
        "errors.log.enable",
    }


def _operator(dlq: list | None = None, **config: str) -> RetryWithToleranceOperator:
    def write(topic, key, value, headers) -> None:  # type: ignore[no-untyped-def]
        assert dlq is not None
        dlq.append((topic, key, value, dict(headers)))

    return RetryWithToleranceOperator(
        ErrorHandlingConfig.from_connector_config(config), "c", 3,
        stopping=threading.Event(), dlq=write,
    )  # fmt: skip


def test_retriable_errors_are_retried_until_success() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise RetriableError("blip")
        return "ok"

    op = _operator(**{"errors.retry.timeout": "5000", "errors.retry.delay.max.ms": "10"})
    assert op.run("VALUE_CONVERTER", object(), flaky) == (True, "ok")
    assert len(calls) == 3


def test_retries_stop_at_the_timeout_then_tolerance_applies() -> None:
    def always() -> None:
        raise RetriableError("down")

    op = _operator(**{"errors.retry.timeout": "300", "errors.retry.delay.max.ms": "50"})
    started = time.monotonic()
    with pytest.raises(ToleranceExceededError):
        op.run("KEY_CONVERTER", object(), always)
    assert 0.2 < time.monotonic() - started < 2

    tolerant = _operator(**{"errors.tolerance": "all"})
    assert tolerant.run("KEY_CONVERTER", object(), always) == (False, None)
    assert tolerant.failures == 1


def test_source_failure_goes_to_the_dead_letter_queue() -> None:
    dlq: list = []
    op = _operator(
        dlq,
        **{"errors.tolerance": "all", "errors.deadletterqueue.topic.name": "dead",
           "errors.deadletterqueue.context.headers.enable": "true"},
    )  # fmt: skip
    record = SourceRecord(topic="orders", key="k1", value={"a": 1})

    def bad() -> None:
        raise DataError("nope")

    ok, _ = op.execute(FailureContext("TRANSFORMATION", "Cast", source=record), bad)
    assert not ok
    [(topic, key, value, headers)] = dlq
    assert (topic, key, value) == ("dead", b'"k1"', b'{"a": 1}')
    assert headers["__connect.errors.topic"] == b"orders"
    assert headers["__connect.errors.stage"] == b"TRANSFORMATION"
    assert headers["__connect.errors.class.name"] == b"Cast"
    assert headers["__connect.errors.task.id"] == b"3"
    assert headers["__connect.errors.exception.class.name"] == b"hub.api.errors.DataError"


def _batch(submitted: SubmittedRecords, *records: tuple[str, int]) -> Any:
    """A sealed batch of ``records`` ((file, pos) pairs), each produced once, none acked."""
    batch = submitted.begin()
    for name, pos in records:
        batch.note({"f": name}, {"pos": pos})
        batch.produced += 1
    return batch


def _ack(batch: Any, times: int = 1) -> None:
    for _ in range(times):
        batch.on_delivery(None, None)


def test_committable_offsets_stop_at_the_first_incomplete_batch() -> None:
    handed_out: list[list[str]] = []
    submitted = SubmittedRecords(on_complete=handed_out.append)
    first = _batch(submitted, ("a", 1), ("a", 2), ("b", 1))
    submitted.seal(first, ["first"])
    second = _batch(submitted, ("a", 3))
    submitted.seal(second, ["second"])
    third = _batch(submitted, ("b", 2))
    submitted.seal(third, ["third"])
    _ack(second)  # out of order: the first batch is still outstanding
    _ack(third)
    _ack(first, 2)  # one of its three records still unacknowledged
    # Both partitions have a record in `first`, so nothing after it is committable yet.
    assert submitted.committable() == []
    assert handed_out == []  # commit_records waits for poll order
    assert not submitted.await_all(0.01)
    assert submitted.outstanding == 1
    _ack(first)
    assert handed_out == [["first"], ["second"], ["third"]]
    assert sorted(submitted.committable(), key=str) == [
        ({"f": "a"}, {"pos": 3}),
        ({"f": "b"}, {"pos": 2}),
    ]
    assert submitted.await_all(0.01) and submitted.committable() == []


def test_a_partition_untouched_by_an_incomplete_batch_is_committable() -> None:
    submitted = SubmittedRecords()
    slow = _batch(submitted, ("a", 1))
    submitted.seal(slow)
    fast = _batch(submitted, ("b", 1), ("b", 2))
    submitted.seal(fast)
    _ack(fast, 2)
    assert submitted.committable() == [({"f": "b"}, {"pos": 2})]
    _ack(slow)
    assert submitted.committable() == [({"f": "a"}, {"pos": 1})]


def test_acks_before_the_seal_and_records_without_acks_complete_the_batch() -> None:
    handed_out: list[list[str]] = []
    submitted = SubmittedRecords(on_complete=handed_out.append)
    early = _batch(submitted, ("a", 1))
    _ack(early)  # acknowledged while the task was still producing the batch
    submitted.seal(early, ["early"])
    filtered = submitted.begin()
    filtered.note({"f": "a"}, {"pos": 2})  # dropped by a transform: nothing to acknowledge
    submitted.seal(filtered, ["filtered"])
    assert handed_out == [["early"], ["filtered"]]
    assert submitted.committable() == [({"f": "a"}, {"pos": 2})]


def test_a_failed_delivery_keeps_the_batch_uncommitted() -> None:
    submitted = SubmittedRecords()
    batch = _batch(submitted, ("a", 1), ("a", 2))
    submitted.seal(batch)
    batch.on_delivery(None, None)
    batch.on_delivery("broker said no", None)
    assert submitted.error == "broker said no"
    assert submitted.committable() == []
