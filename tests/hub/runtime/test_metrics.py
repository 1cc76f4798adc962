"""Kafka Connect metrics of a real worker (in-process herder over a real broker): counters move
exactly with the records the sample connectors produce and consume, a failed task shows in the
status series, and dead-lettered records in the error metrics."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client.exposition import generate_latest

from hub.rest.metrics import registry_for
from hub.runtime.herder import Herder
from sluice.embedded_broker import EmbeddedBroker
from tests.fixtures.broker import wait_until
from tests.fixtures.prometheus import Samples, parse, value
from tests.hub.runtime.test_sink import produce, received


def _scrape(herder: Herder) -> Samples:
    return parse(generate_latest(registry_for(herder)).decode())


def test_source_task_counts_and_status(herder_factory: Callable[..., Herder], name: str) -> None:
    herder = herder_factory()
    herder.create_connector(
        name, {"connector.class": "counter", "topic": name, "count": "100", "batch": "10"}
    )
    task = {"connector": name, "task": "0"}
    write = "kafka_connect_source_task_metrics_source_record_write_total"
    wait_until(lambda: value(_scrape(herder), write, **task) == 100, 20, "100 records written")
    samples = _scrape(herder)
    poll = "kafka_connect_source_task_metrics_source_record_poll_total"
    assert value(samples, poll, **task) == 100
    assert value(samples, "kafka_connect_connector_task_metrics_batch_size_max", **task) == 10
    assert value(samples, "kafka_connect_connector_task_metrics_batch_size_avg", **task) == 10
    status = {"connector": name, "status": "running", "type": "source"}
    assert value(samples, "kafka_connect_connector_status", **status) == 1
    running = {"connector": name, "task": "0", "status": "running"}
    assert value(samples, "kafka_connect_connector_task_status", **running) == 1
    assert value(samples, "kafka_connect_connect_worker_metrics_connector_count") == 1
    commits = "kafka_connect_connector_task_metrics_offset_commit_success_total"
    wait_until(lambda: (value(_scrape(herder), commits, **task) or 0) >= 1, 10, "offset commit")


def test_failed_task_shows_in_status(herder_factory: Callable[..., Herder], name: str) -> None:
    herder = herder_factory(**{"task.restart.backoff.ms": 60_000})
    herder.create_connector(name, {"connector.class": "counter", "topic": name,
                                   "fail_times": "1000"})  # fmt: skip
    failed = {"connector": name, "task": "0", "status": "failed"}
    wait_until(
        lambda: value(_scrape(herder), "kafka_connect_connector_task_status", **failed) == 1,
        10, "task FAILED in the metrics",
    )  # fmt: skip
    samples = _scrape(herder)
    running = {"connector": name, "task": "0", "status": "running"}
    assert value(samples, "kafka_connect_connector_task_status", **running) is None
    count = "kafka_connect_connect_worker_metrics_connector_failed_task_count"
    assert value(samples, count, connector=name) == 1


def test_sink_counts_and_dead_letters(
    hub_broker: EmbeddedBroker, herder_factory: Callable[..., Herder], name: str, topic_name: str
) -> None:
    produce(hub_broker, topic_name, [{"i": 0}, b"not json", {"i": 2}, b"{broken", {"i": 4}], 1)
    herder = herder_factory()
    herder.create_connector(
        name,
        {"connector.class": "recording", "topics": topic_name, "errors.tolerance": "all",
         "errors.deadletterqueue.topic.name": f"{topic_name}-dlq"},
    )  # fmt: skip
    wait_until(lambda: len(received(name)) >= 3, 20, "good records")
    task = {"connector": name, "task": "0"}
    sent = "kafka_connect_sink_task_metrics_sink_record_send_total"
    wait_until(lambda: value(_scrape(herder), sent, **task) == 3, 10, "3 records put")
    samples = _scrape(herder)
    assert value(samples, "kafka_connect_sink_task_metrics_sink_record_read_total", **task) == 5
    assert value(samples, "kafka_connect_task_error_metrics_total_record_errors", **task) == 2
    dlq = "kafka_connect_task_error_metrics_deadletterqueue_produce_requests"
    assert value(samples, dlq, **task) == 2
    assert value(samples, "kafka_connect_task_error_metrics_total_errors_logged", **task) == 0
    assert value(samples, "kafka_connect_sink_task_metrics_partition_count", **task) == 1
