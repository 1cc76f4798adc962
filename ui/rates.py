"""Messages in and out per second, sampled in the background for the console's charts.

"In" is the growth of every partition's end offset; "out" is the growth of every consumer
group's committed offsets (what consumers finished with). Both come from admin calls, so this
works against any Kafka cluster without its metrics endpoint. When the brokers' metrics
endpoints are known (``ui.broker_metrics``), "in" is read from their MessagesIn counters
instead, so the console and a Prometheus dashboard show the same number; ``in_source`` says
which.

The same samples give each consumer group's total lag over time (the group page's trend chart),
counted as the group page counts it: every partition of the topics the group committed to, a
partition without a commit lagging by all it holds.

The sampler thread starts with the first console request and stops after ``IDLE_STOP`` seconds
without one (a hub nobody is watching pays nothing for the console) or when the app shuts down.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from typing import Any

from kafka_admin import KafkaAdmin
from kafka_admin.groups import committed_offsets
from ui import broker_metrics

log = logging.getLogger(__name__)

INTERVAL = 5.0
KEEP = 72  # six minutes of samples
IDLE_STOP = 600.0


class RateSampler:
    """Keeps ``(time, total_in, total_out, per_topic_end)`` samples; thread-safe."""

    def __init__(
        self, admin: KafkaAdmin, interval: float = INTERVAL, metrics_urls: list[str] | None = None
    ) -> None:
        self.admin = admin
        self.interval = interval
        self.metrics_urls = list(metrics_urls or [])
        self._samples: deque[tuple[float, int, int, dict[str, int]]] = deque(maxlen=KEEP)
        self._lags: dict[str, deque[tuple[float, int]]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._last_used = time.monotonic()
        self._stopped = threading.Event()

    def stop(self) -> None:
        """Ends the thread within one interval; a later ``touch`` does not restart it."""
        self._stopped.set()

    def touch(self) -> None:
        """Notes a console request; (re)starts the thread if it is not running."""
        with self._lock:
            self._last_used = time.monotonic()
            if self._stopped.is_set():
                return
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="console-rate-sampler", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while time.monotonic() - self._last_used < IDLE_STOP and not self._stopped.is_set():
            try:
                self.sample()
            except Exception as exc:  # cluster briefly away: keep the old samples
                log.debug("rate sample failed: %r", exc)
            self._stopped.wait(self.interval)

    def sample(self) -> None:
        md = self.admin.metadata()
        parts = [(t, p) for t, meta in md.topics.items() for p in meta.partitions]
        marks = self.admin.watermarks(parts)
        per_topic: dict[str, int] = {}
        if self.metrics_urls:
            per_topic = broker_metrics.messages_in(self.metrics_urls, self.admin.timeout)
        else:
            for (topic, _), (_, end) in marks.items():
                per_topic[topic] = per_topic.get(topic, 0) + end
        total_in = sum(v for t, v in per_topic.items() if not self.admin.is_internal(t))
        total_out = 0
        groups = self.admin.admin.list_consumer_groups(request_timeout=self.admin.timeout).result(
            self.admin.timeout
        )
        lags: dict[str, int] = {}
        for group in groups.valid:
            offsets = committed_offsets(self.admin, group.group_id)
            total_out += sum(o for (t, _), o in offsets.items() if not self.admin.is_internal(t))
            topics = {t for t, _ in offsets}
            lags[group.group_id] = sum(
                max(end - offsets.get((t, p), start), 0)
                for (t, p), (start, end) in marks.items()
                if t in topics
            )
        now = time.time()
        with self._lock:
            self._samples.append((now, total_in, total_out, per_topic))
            for group_id, lag in lags.items():
                self._lags.setdefault(group_id, deque(maxlen=KEEP)).append((now, lag))
            for gone in set(self._lags) - set(lags):
                del self._lags[gone]

    def series(self) -> list[dict[str, float]]:
        """Per interval between samples: its end time (ms) and in/out messages per second."""
        with self._lock:
            samples = list(self._samples)
        out = []
        for (t0, in0, out0, _), (t1, in1, out1, _) in itertools.pairwise(samples):
            span = max(t1 - t0, 1e-3)
            out.append({
                "time": int(t1 * 1000),
                "in": max(in1 - in0, 0) / span,
                "out": max(out1 - out0, 0) / span,
            })  # fmt: skip
        return out

    def topic_rates(self) -> dict[str, float]:
        """Messages in per second per topic over the last interval (empty until two samples)."""
        with self._lock:
            if len(self._samples) < 2:
                return {}
            (t0, _, _, a), (t1, _, _, b) = self._samples[-2], self._samples[-1]
        span = max(t1 - t0, 1e-3)
        return {t: max(b[t] - a.get(t, 0), 0) / span for t in b}

    def lag_series(self, group_id: str) -> list[dict[str, float]]:
        """The group's total lag per sample: ``[{"time" (ms), "lag"}]``, oldest first."""
        with self._lock:
            points = list(self._lags.get(group_id, ()))
        return [{"time": int(t * 1000), "lag": lag} for t, lag in points]

    def snapshot(self) -> dict[str, Any]:
        source = "broker-metrics" if self.metrics_urls else "admin-api"
        return {"interval_s": self.interval, "in_source": source, "series": self.series()}
