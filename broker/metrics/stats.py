"""Counters the request path updates: per topic, per API, and requests in flight.

Cost rule: the hot path does integer additions on attributes of objects it already holds, and
one dict lookup per topic; it takes no lock and allocates nothing after a topic's first
request. That is safe because the broker's event loop is the only writer, and the metrics
endpoint runs on that same loop (``server.py``), so a scrape never sees a half-updated
counter. Counts are per produced batch and per request, never per record: a batch's record
count comes from the offsets the log assigned to it.

Timing is a histogram with fixed millisecond buckets (``REQUEST_BUCKETS_MS``): one ``bisect``
and two additions per request; Prometheus computes the percentiles (``histogram_quantile``),
so the broker keeps no samples.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from functools import cache

from kio.schema.index import api_key_map

REQUEST_BUCKETS_MS: tuple[float, ...] = (
    0.25, 0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000,
)  # fmt: skip
"""Upper bounds of the request-time histogram (ms); a last, unbounded bucket follows."""


@cache
def request_name(api_key: int) -> str:
    """Kafka's name of an API (``Produce``, ``ListOffsets``), the ``request`` label's value."""
    snake = api_key_map.get(api_key)
    if snake is None:
        return f"Api{api_key}"
    return "".join(part.capitalize() for part in str(snake).split("_"))


class TopicStats:
    """Kafka's ``BrokerTopicMetrics`` for one topic (cumulative since start)."""

    __slots__ = (
        "bytes_in",
        "bytes_out",
        "failed_fetch_requests",
        "failed_produce_requests",
        "fetch_requests",
        "messages_in",
        "produce_requests",
        "replication_bytes_out",
    )

    def __init__(self) -> None:
        self.messages_in = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.replication_bytes_out = 0
        self.produce_requests = 0
        self.fetch_requests = 0
        self.failed_produce_requests = 0
        self.failed_fetch_requests = 0


class RequestStats:
    """Kafka's ``RequestMetrics`` for one API: request count and total-time histogram."""

    __slots__ = ("buckets", "count", "sum_ms")

    def __init__(self) -> None:
        self.count = 0
        self.sum_ms = 0.0
        self.buckets = [0] * (len(REQUEST_BUCKETS_MS) + 1)  # per bucket, not cumulative


class BrokerStats:
    """Every counter of one broker; ``broker.stats`` is None when metrics are off."""

    def __init__(self) -> None:
        self.topics: dict[str, TopicStats] = {}
        self.requests: dict[int, RequestStats] = {}
        self.in_flight = 0
        """Requests being handled now (Kafka's request queue has no equivalent: each
        connection is its own task, so this is what is waiting for the loop or a handler)."""

    def topic(self, name: str) -> TopicStats:
        """The counters of ``name``, created on its first request."""
        stats = self.topics.get(name)
        if stats is None:
            stats = self.topics[name] = TopicStats()
        return stats

    def produced(self, topic: str, records: int, nbytes: int) -> None:
        """One batch appended: ``records`` offsets assigned, ``nbytes`` as sent."""
        stats = self.topic(topic)
        stats.produce_requests += 1
        stats.messages_in += records
        stats.bytes_in += nbytes

    def produce_failed(self, topic: str) -> None:
        stats = self.topic(topic)
        stats.produce_requests += 1
        stats.failed_produce_requests += 1

    def fetched(self, topic: str, nbytes: int, *, replica: bool, failed: bool) -> None:
        """One partition of a Fetch answered; followers' reads count as replication bytes."""
        stats = self.topic(topic)
        stats.fetch_requests += 1
        if failed:
            stats.failed_fetch_requests += 1
        elif replica:
            stats.replication_bytes_out += nbytes
        else:
            stats.bytes_out += nbytes

    def request_started(self) -> float:
        """Marks a request in flight; returns its start time for ``request_done``."""
        self.in_flight += 1
        return time.perf_counter()

    def request_done(self, api_key: int, started: float) -> None:
        self.in_flight -= 1
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        stats = self.requests.get(api_key)
        if stats is None:
            stats = self.requests[api_key] = RequestStats()
        stats.count += 1
        stats.sum_ms += elapsed_ms
        stats.buckets[bisect_left(REQUEST_BUCKETS_MS, elapsed_ms)] += 1
