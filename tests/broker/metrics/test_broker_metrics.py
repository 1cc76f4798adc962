"""The broker's Prometheus endpoint, scraped from a real broker process with real clients.

Counters are checked for exact movement against known traffic on a private broker (nothing
else produces to it): records in, bytes in equal to the bytes stored, bytes out equal to what
one consumer read, consumer lag equal to the high watermark minus the committed offset.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.fixtures.broker import BrokerProcess, wait_until
from tests.fixtures.hub import free_port
from tests.fixtures.prometheus import fetch, parse, scrape, value

TIMEOUT = 20.0


@pytest.fixture(scope="module")
def metered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    port = free_port()
    proc = BrokerProcess(tmp_path_factory.mktemp("metered") / "data", "--metrics-port", str(port))
    proc.metrics_url = f"http://127.0.0.1:{port}"  # type: ignore[attr-defined]
    proc.start()
    yield proc
    assert proc.stop() == 0


def _url(broker: BrokerProcess, path: str = "/metrics") -> str:
    return f"{broker.metrics_url}{path}"  # type: ignore[attr-defined]


def _create(broker: BrokerProcess, name: str, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config=config)])[name].result(TIMEOUT)


def _produce(broker: BrokerProcess, topic: str, n: int, **conf: object) -> list[KafkaError]:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, **conf})
    errors: list[KafkaError] = []
    for i in range(n):
        producer.produce(topic, value=b"v%05d" % i, key=b"k%d" % (i % 7),
                         on_delivery=lambda err, _m: err and errors.append(err))  # fmt: skip
    assert producer.flush(TIMEOUT) == 0
    return errors


def test_ready_and_unknown_paths(metered: BrokerProcess) -> None:
    with urllib.request.urlopen(_url(metered, "/ready"), timeout=5) as response:
        assert response.status == 200 and response.read() == b"ready\n"
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(_url(metered, "/nope"), timeout=5)
    assert err.value.code == 404


def test_produce_and_fetch_counters_move_exactly(metered: BrokerProcess, topic_name: str) -> None:
    _create(metered, topic_name)
    assert _produce(metered, topic_name, 250) == []
    samples = scrape(_url(metered))
    t = {"topic": topic_name}
    p = {"topic": topic_name, "partition": "0"}
    assert value(samples, "kafka_server_brokertopicmetrics_messagesin_total", **t) == 250
    stored = value(samples, "kafka_log_log_size", **p)
    assert stored and value(samples, "kafka_server_brokertopicmetrics_bytesin_total", **t) == stored
    assert value(samples, "kafka_log_log_logendoffset", **p) == 250
    assert value(samples, "kafka_server_brokertopicmetrics_bytesout_total", **t) == 0

    consumer = Consumer({"bootstrap.servers": metered.bootstrap, "group.id": "unused",
                         "enable.auto.commit": False})  # fmt: skip
    consumer.assign([TopicPartition(topic_name, 0, 0)])
    seen = 0
    try:
        while seen < 250:
            msg = consumer.poll(TIMEOUT)
            assert msg is not None and msg.error() is None
            seen += 1
    finally:
        consumer.close()
    samples = scrape(_url(metered))
    assert value(samples, "kafka_server_brokertopicmetrics_bytesout_total", **t) == stored
    fetches = value(samples, "kafka_server_brokertopicmetrics_totalfetchrequests_total", **t)
    assert fetches and fetches >= 1
    produce = {"request": "Produce"}
    requests = value(samples, "kafka_network_requestmetrics_requests_total", **produce)
    assert requests and requests >= 1
    assert value(samples, "kafka_network_requestmetrics_totaltimems_count", **produce) == requests
    inf = value(samples, "kafka_network_requestmetrics_totaltimems_bucket", le="+Inf", **produce)
    assert inf == requests


def test_failed_produce_is_counted(metered: BrokerProcess) -> None:
    name = "kafka_server_brokertopicmetrics_failedproducerequests_total"
    t = {"topic": "__consumer_offsets"}
    failed_before = value(scrape(_url(metered)), name, **t)
    errors = _produce(metered, "__consumer_offsets", 1, retries=0)
    assert errors and errors[0].code() == KafkaError.TOPIC_EXCEPTION
    failed = value(scrape(_url(metered)), name, **t)
    assert failed == (failed_before or 0) + 1


def test_group_lag_is_end_offset_minus_committed(metered: BrokerProcess, topic_name: str) -> None:
    _create(metered, topic_name)
    assert _produce(metered, topic_name, 40) == []
    group = f"g-{topic_name}"
    consumer = Consumer({"bootstrap.servers": metered.bootstrap, "group.id": group,
                         "enable.auto.commit": False})  # fmt: skip
    try:
        consumer.commit(offsets=[TopicPartition(topic_name, 0, 15)], asynchronous=False)
        labels = {"consumergroup": group, "topic": topic_name, "partition": "0"}
        samples = scrape(_url(metered))
        assert value(samples, "kafka_consumergroup_current_offset", **labels) == 15
        assert value(samples, "kafka_consumergroup_lag", **labels) == 40 - 15
        groups = value(samples, "kafka_coordinator_group_groupmetadatamanager_numgroups")
        assert groups and groups >= 1
        assert _produce(metered, topic_name, 10) == []
        assert value(scrape(_url(metered)), "kafka_consumergroup_lag", **labels) == 50 - 15
        consumer.commit(offsets=[TopicPartition(topic_name, 0, 50)], asynchronous=False)
        assert value(scrape(_url(metered)), "kafka_consumergroup_lag", **labels) == 0
    finally:
        consumer.close()


def test_flushes_are_timed(metered: BrokerProcess, topic_name: str) -> None:
    before = value(scrape(_url(metered)), "kafka_log_logflushstats_logflushrateandtimems_count")
    _create(metered, topic_name, **{"flush.messages": "1"})
    assert _produce(metered, topic_name, 5, **{"linger.ms": 0, "max.in.flight": 1}) == []
    after = value(scrape(_url(metered)), "kafka_log_logflushstats_logflushrateandtimems_count")
    assert after is not None and after >= (before or 0) + 1


def test_concurrent_scrapes_stay_whole_and_monotonic(
    metered: BrokerProcess, topic_name: str
) -> None:
    _create(metered, topic_name)
    name, t = "kafka_server_brokertopicmetrics_messagesin_total", {"topic": topic_name}
    failures: list[str] = []
    done = threading.Event()

    def scraper() -> None:
        last = 0.0
        while not done.is_set():
            try:
                seen = value(parse(fetch(_url(metered))), name, **t) or 0.0
            except Exception as exc:  # collected: a thread's assertion would be lost
                failures.append(repr(exc))
                return
            if seen < last:
                failures.append(f"went back from {last} to {seen}")
            last = seen

    threads = [threading.Thread(target=scraper) for _ in range(6)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(4):
            assert _produce(metered, topic_name, 100) == []
    finally:
        done.set()
        for thread in threads:
            thread.join(TIMEOUT)
    assert not failures, failures
    wait_until(lambda: value(scrape(_url(metered)), name, **t) == 400, 5, "messages in = 400")


def test_metrics_port_property_and_validation(tmp_path: Path) -> None:
    from broker.cli.serve import build_config

    config = build_config(None, ["metrics.port=9404"], {"data_dir": tmp_path})
    assert config.metrics_port == 9404  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"metrics\.port"):
        build_config(None, ["metrics.port=70000"], {"data_dir": tmp_path})
