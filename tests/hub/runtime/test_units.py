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
from hub.runtime.submitted_records import SubmittedRecords


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
        "linger.ms": "20",
    }
    assert config.config_storage_topic == "sluice-connect-configs"
    assert config.raw()["offset.storage.partitions"] == 5


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


def test_sink_header_fast_path_matches_the_converter() -> None:
    from types import SimpleNamespace

    from hub.api import Header
    from hub.converters.headers import SimpleHeaderConverter
    from hub.runtime.worker_sink_task import WorkerSinkTask

    converter = SimpleHeaderConverter({})
    task = object.__new__(WorkerSinkTask)
    task.converters = SimpleNamespace(header=converter)  # type: ignore[assignment]
    task._header_cache = {}
    task._int_headers = True
    raw = [("n", str(n).encode()) for n in (0, 7, 127, 128, 40_000, 2**31, 2**62, 10**18)]
    raw += [("s", b"us-east"), ("s", b"us-east"), ("b", b"true"), ("z", None), ("j", b"[1]"),
            ("neg", b"-5"), ("f", b"1.5"), ("e", b""), ("pad", b"007")]  # fmt: skip
    for _ in range(2):  # the second round is served from the cache
        got = task._headers("t", raw)
        want = tuple(
            Header(k, sv.value, sv.schema)
            for k, d in raw
            for sv in [converter.to_connect("t", k, d)]
        )
        assert got == want


def test_new_sink_record_equals_the_constructor() -> None:
    from hub.api import Header, SinkRecord, TimestampType
    from hub.runtime.worker_sink_task import new_sink_record

    fast = new_sink_record("t", 2, b"k", {"v": 1}, None, None, 5, (Header("h", 1),), 9,
                           TimestampType.LOG_APPEND_TIME)  # fmt: skip
    assert fast == SinkRecord(topic="t", partition=2, key=b"k", value={"v": 1}, timestamp=5,
                              headers=(Header("h", 1),), offset=9,
                              timestamp_type=TimestampType.LOG_APPEND_TIME)  # fmt: skip
    assert fast.replace(offset=10).offset == 10
