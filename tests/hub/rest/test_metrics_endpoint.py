"""``GET /metrics`` of a whole ``sluice up`` (hub subprocess, its broker with a metrics port):
Kafka Connect's counters move exactly with a file pipeline's lines, the route needs the REST
token, concurrent scrapes all parse, and the broker's view of the same traffic agrees."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import HubProcess, free_port
from tests.fixtures.prometheus import fetch, parse, scrape, value

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
LINES = 300


@pytest.fixture
def metered_hub(tmp_path: Path) -> Iterator[HubProcess]:
    """``sluice up --broker-metrics-port``: the embedded broker serves its metrics too."""
    proc = HubProcess(tmp_path / "hub", {"offset.flush.interval.ms": 100})
    proc.broker_metrics = free_port()  # type: ignore[attr-defined]
    proc.extra_args = ("--broker-metrics-port", str(proc.broker_metrics))  # type: ignore[attr-defined]
    proc.start()
    yield proc
    assert proc.stop() == 0


def test_file_pipeline_counts_on_hub_and_broker(metered_hub: HubProcess, tmp_path: Path) -> None:
    hub = metered_hub
    broker_metrics = hub.broker_metrics  # type: ignore[attr-defined]
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(LINES)))
    for name, config in (
        ("src", {"connector.class": SOURCE, "file": str(source), "topic": "lines"}),
        ("snk", {"connector.class": SINK, "file": str(sink), "topics": "lines"}),
    ):
        status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
        assert status == 201, body
    wait_until(lambda: sink.exists() and len(sink.read_text().splitlines()) == LINES, 30, "sink")

    url = f"{hub.rest_url}/metrics"
    src, snk = {"connector": "src", "task": "0"}, {"connector": "snk", "task": "0"}
    send = "kafka_connect_sink_task_metrics_sink_record_send_total"
    wait_until(lambda: value(scrape(url, hub.auth_headers), send, **snk) == LINES, 10, "sent")
    samples = scrape(url, hub.auth_headers)
    assert (
        value(samples, "kafka_connect_source_task_metrics_source_record_poll_total", **src) == LINES
    )
    assert (
        value(samples, "kafka_connect_source_task_metrics_source_record_write_total", **src)
        == LINES
    )
    assert value(samples, "kafka_connect_sink_task_metrics_sink_record_read_total", **snk) == LINES
    for name, kind in (("src", "source"), ("snk", "sink")):
        status = {"connector": name, "status": "running", "type": kind}
        assert value(samples, "kafka_connect_connector_status", **status) == 1

    assert value(samples, "sluice_connector_task_bytes_behind", **src) == 0
    assert value(samples, "sluice_connector_task_files", **src) == 1
    assert hub.request("PUT", "/connectors/src/pause", None)[0] == 202
    wait_until(
        lambda: hub.request("GET", "/connectors/src/status")[1]["tasks"][0]["state"] == "PAUSED",
        10, "source paused",
    )  # fmt: skip
    more = "".join(f"late-{i}\n" for i in range(7))
    with source.open("a") as f:
        f.write(more)
    behind = "sluice_connector_task_bytes_behind"
    wait_until(lambda: value(scrape(url, hub.auth_headers), behind, **src) == len(more), 10,
               "bytes behind = the bytes appended while paused")  # fmt: skip

    broker = scrape(f"http://127.0.0.1:{broker_metrics}/metrics")
    assert value(broker, "kafka_server_brokertopicmetrics_messagesin_total", topic="lines") == LINES
    lag = {"consumergroup": "connect-snk", "topic": "lines", "partition": "0"}
    wait_until(
        lambda: value(scrape(f"http://127.0.0.1:{broker_metrics}/metrics"),
                      "kafka_consumergroup_lag", **lag) == 0,
        10, "the sink's committed offset to reach the end",
    )  # fmt: skip


def test_metrics_need_the_token_and_survive_concurrent_scrapes(hub: HubProcess) -> None:
    url = f"{hub.rest_url}/metrics"
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(url, timeout=10)
    assert err.value.code == 401
    failures: list[str] = []

    def scraper() -> None:
        for _ in range(10):
            try:
                samples = parse(fetch(url, hub.auth_headers))
                assert value(samples, "kafka_connect_connect_worker_metrics_connector_count") == 0
            except Exception as exc:  # collected: a thread's assertion would be lost
                failures.append(repr(exc))
                return

    threads = [threading.Thread(target=scraper) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
