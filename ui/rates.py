"""Messages in and out per second, sampled in the background for the console's charts.

"In" is the growth of every partition's end offset; "out" is the growth of every consumer
group's committed offsets (what consumers finished with). Both come from admin calls, so this
works against any Kafka cluster without its metrics endpoint.

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

from ui.groups import committed_offsets
from ui.kafka_admin import TIMEOUT, KafkaAdmin

log = logging.getLogger(__name__)

INTERVAL = 5.0
KEEP = 72  # six minutes of samples
IDLE_STOP = 600.0


class RateSampler:
    """Keeps ``(time, total_in, total_out, per_topic_end)`` samples; thread-safe."""

    def __init__(self, admin: KafkaAdmin, interval: float = INTERVAL) -> None:
        self.admin = admin
        self.interval = interval
        self._samples: deque[tuple[float, int, int, dict[str, int]]] = deque(maxlen=KEEP)
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
        for (topic, _), (_, end) in marks.items():
            per_topic[topic] = per_topic.get(topic, 0) + end
        total_in = sum(v for t, v in per_topic.items() if not self.admin.is_internal(t))
        total_out = 0
        groups = self.admin.admin.list_consumer_groups(request_timeout=TIMEOUT).result(TIMEOUT)
        for group in groups.valid:
            offsets = committed_offsets(self.admin, group.group_id)
            total_out += sum(o for (t, _), o in offsets.items() if not self.admin.is_internal(t))
        with self._lock:
            self._samples.append((time.time(), total_in, total_out, per_topic))

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

    def snapshot(self) -> dict[str, Any]:
        return {"interval_s": self.interval, "series": self.series()}
