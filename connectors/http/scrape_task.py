"""PrometheusScrapeTask: scrapes Prometheus text-format targets every ``scrape.interval.ms``.

One record per sample, shaped for the ``metrics_rollup`` pipeline template::

    {"name": "http_requests_total", "tags": {"method": "get", "instance": "host:9100"},
     "value": 1027.0, "time": "2023-11-14T22:13:20.000Z", "target": "http://host:9100/metrics",
     "type": "counter"}

``time`` is the sample's own timestamp when the target gives one, else the scrape time, as
ISO-8601 UTC text because the template parses it with Spark's ``try_to_timestamp``; the record
timestamp carries the same instant in epoch milliseconds. The key is ``name`` plus sorted
tags, so a compacted topic would keep the latest value per series.

Like Prometheus, every scrape also yields ``up`` (1 or 0) per target: a target that is down
is a data point, not a task failure, so one dead exporter never stops the others. Samples
whose value is NaN or infinite are dropped (JSON has no such numbers and roll-ups cannot add
them).

Targets are scraped one per ``poll()`` so each poll returns promptly; the round starts every
interval (fixed rate). Scrapes are not retried within a round: the next round is the retry.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from connectors.http import prometheus
from connectors.http._client import build_client, excerpt
from connectors.http.config import ScrapeConfig
from hub.api import SourceRecord, SourceTask, SourceTaskContext

log = logging.getLogger(__name__)

ACCEPT = "text/plain;version=0.0.4;q=1.0,*/*;q=0.1"


def iso_ms(epoch_ms: int) -> str:
    """``2026-01-01T00:00:00.000Z``: what Spark's timestamp cast reads."""
    text = datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


class PrometheusScrapeTask(SourceTask):
    def __init__(
        self,
        context: SourceTaskContext,
        *,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], object] | None = None,
    ) -> None:
        super().__init__(context)
        self._clock = clock
        self._stopping = threading.Event()
        self._wait = wait or self._stopping.wait
        self._pending: list[str] = []
        self._due = 0.0

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = c = ScrapeConfig.parse(config)
        self.name = str(config.get("name", "http-scrape"))
        self.client = build_client(c)
        self._due = self._clock()
        log.info("[%s] scraping %d target(s) every %d ms", self.name, len(c.targets),
                 c.scrape_interval_ms)  # fmt: skip

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.is_set():
            return None
        if not self._pending:
            now = self._clock()
            if now < self._due:
                self._wait(min(1.0, self._due - now))
                return None
            self._pending = list(self.config.targets)
            self._due = max(now, self._due + self.config.scrape_interval_ms / 1000)
        return self.scrape(self._pending.pop(0))

    def scrape(self, target: str) -> list[SourceRecord]:
        """All samples of one target plus its ``up`` sample."""
        now_ms = int(time.time() * 1000)
        base = self._base_tags(target)
        samples: list[prometheus.Sample] = []
        try:
            response = self.client.get(target, headers={"Accept": ACCEPT})
            if response.status_code != 200:
                raise ValueError(f"HTTP {response.status_code}: {excerpt(response)}")
            kind = response.headers.get("content-type", "")
            openmetrics = kind.startswith("application/openmetrics-text")
            samples = list(prometheus.parse(response.text, openmetrics=openmetrics))
            up = 1.0
        except (httpx.HTTPError, ValueError) as exc:
            if self._stopping.is_set():
                return []
            log.warning("[%s] scrape of %s failed: %s", self.name, target, exc)
            up = 0.0
        samples.append(prometheus.Sample("up", {}, up, None, "gauge"))
        out = []
        for s in samples:
            if not math.isfinite(s.value):
                continue
            tags = {**base, **s.labels}
            ts = s.timestamp_ms if s.timestamp_ms is not None else now_ms
            value = {"name": s.name, "tags": tags, "value": s.value, "time": iso_ms(ts),
                     "target": target, "type": s.type}  # fmt: skip
            key = s.name + "".join(f",{k}={tags[k]}" for k in sorted(tags))
            out.append(SourceRecord(topic=self.config.topic, key=key, value=value, timestamp=ts))
        return out

    def _base_tags(self, target: str) -> dict[str, str]:
        tags = {}
        if self.config.add_instance_tag:
            url = httpx.URL(target)
            tags["instance"] = f"{url.host}:{url.port}" if url.port else url.host
        if self.config.job:
            tags["job"] = self.config.job
        return tags

    def stop(self) -> None:
        self._stopping.set()
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        log.info("[%s] stopped", getattr(self, "name", "http-scrape"))
