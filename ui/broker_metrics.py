"""Messages in per topic from the brokers' own Prometheus ``/metrics``, for the console's rates.

When the worker names its brokers' metrics endpoints (``console.broker.metrics.urls``; ``sluice
up --broker-metrics-port`` sets it for its embedded broker), the overview and topics pages'
"in" rate is the growth of ``kafka_server_brokertopicmetrics_messagesin_total`` — the number a
Grafana panel over ``rate(...)`` shows — instead of the growth of end offsets. Kafka counts it
on the partition leader only, so the sum over every broker's endpoint is the cluster's total.
The two differ where they should: transaction markers move end offsets but are not messages.

There is no broker metric for "out" in messages (only bytes) or for a consumer group's lag as
the console counts it (partitions without a commit included), so those stay on the admin API.
"""

from __future__ import annotations

import urllib.request
from urllib.parse import urlsplit

from prometheus_client.parser import text_string_to_metric_families

SETTING = "console.broker.metrics.urls"
MESSAGES_IN = "kafka_server_brokertopicmetrics_messagesin_total"


def parse_urls(value: object) -> list[str]:
    """The comma-separated setting as URLs; ``ValueError`` naming the setting otherwise."""
    if value is None or value == "":
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    urls = [str(u).strip() for u in items if str(u).strip()]
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{SETTING}: {url!r} is not an http(s) URL of a broker's /metrics")
    return urls


def messages_in(urls: list[str], timeout: float) -> dict[str, int]:
    """Records appended per topic since each broker started, summed over ``urls``; an
    unreachable endpoint raises (``OSError``): a partial sum would read as a drop."""
    totals: dict[str, int] = {}
    for url in urls:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            text = answer.read().decode()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                topic = sample.labels.get("topic")
                if sample.name == MESSAGES_IN and topic is not None:
                    totals[topic] = totals.get(topic, 0) + int(sample.value)
    return totals
