"""The console's "messages in" rate from the broker's own ``/metrics`` when the worker knows
the endpoint (``console.broker.metrics.urls``): a real broker with its metrics port on, a
transactional producer whose commit marker moves end offsets but is not a message, and the
overview page saying where its number comes from (issue 26: metric charts)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import NewTopic

from kafka_admin import KafkaAdmin
from tests.fixtures.broker import BrokerProcess, wait_until
from tests.fixtures.browser import screenshot
from tests.fixtures.hub import HubProcess, free_port
from tests.ui.conftest import console_client
from ui.broker_metrics import SETTING, parse_urls
from ui.rates import RateSampler

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips with the reason
    expect = None


@pytest.fixture(scope="module")
def metered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    port = free_port()
    proc = BrokerProcess(tmp_path_factory.mktemp("metered") / "data", "--metrics-port", str(port))
    proc.metrics_url = f"http://127.0.0.1:{port}/metrics"  # type: ignore[attr-defined]
    proc.start()
    yield proc
    proc.stop()


def _transaction(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(20)
    producer.begin_transaction()
    for i in range(count):
        producer.produce(topic, value=f"v{i}".encode(), partition=0)
    producer.commit_transaction(20)


def test_in_rate_counts_messages_from_broker_metrics_not_end_offsets(
    metered: BrokerProcess,
) -> None:
    topic = f"metered-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdmin({"bootstrap.servers": metered.bootstrap})
    admin.admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(20)
    url = metered.metrics_url  # type: ignore[attr-defined]
    from_metrics = RateSampler(admin, metrics_urls=[url])
    from_offsets = RateSampler(admin)
    for sampler in (from_metrics, from_offsets):
        sampler.sample()
    _transaction(metered.bootstrap, topic, 10)  # 10 records + 1 commit marker
    for sampler in (from_metrics, from_offsets):
        sampler.sample()

    def grew(sampler: RateSampler) -> int:
        (_, _, _, before), (_, _, _, after) = list(sampler._samples)[-2:]
        return after.get(topic, 0) - before.get(topic, 0)

    assert grew(from_metrics) == 10  # MessagesIn: the records only
    assert grew(from_offsets) == 11  # the end offset: the marker too
    assert from_metrics.snapshot()["in_source"] == "broker-metrics"
    assert from_offsets.snapshot()["in_source"] == "admin-api"


def test_bad_metrics_urls_are_refused_by_name(broker: BrokerProcess) -> None:
    with pytest.raises(ValueError, match=SETTING):
        parse_urls("localhost:9404")
    assert parse_urls("http://a:1/metrics, http://b:2/metrics") == [
        "http://a:1/metrics", "http://b:2/metrics",
    ]  # fmt: skip
    with console_client(broker, **{SETTING: "ftp://x/metrics"}) as client:
        answer = client.get("/console/api/rates")
        assert answer.status_code == 503 and SETTING in answer.json()["message"]


def test_sluice_up_with_broker_metrics_charts_messages_in_from_them(
    tmp_path: Path, browser: Any
) -> None:
    """``sluice up --broker-metrics-port`` points the console at its embedded broker's
    ``/metrics``; the overview's "in" legend says so and charts the traffic."""
    hub = HubProcess(tmp_path / "hub", {"console.rates.interval.ms": 500})
    hub.extra_args = ("--broker-metrics-port", str(free_port()))
    hub.start()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    producer = Producer({"bootstrap.servers": hub.bootstrap, "linger.ms": 5})
    try:
        assert page.request.post(f"{hub.rest_url}/console/login", data={"token": hub.token}).ok
        page.goto(f"{hub.rest_url}/ui/#/")
        legend = page.locator(".legend .in")
        expect(legend).to_contain_text("broker metrics: MessagesIn")

        def charted() -> bool:
            for i in range(200):
                producer.produce("clicks", value=f'{{"click": {i}}}'.encode())
            producer.flush(10)
            rate = legend.inner_text().rsplit(" ", 1)[-1]
            return rate.endswith("/s") and rate != "0.0/s"

        wait_until(charted, 30, "a messages-in rate on the overview")
        screenshot(page, "overview-broker-metrics")
    finally:
        context.close()
        hub.stop()
