"""The three HTTP source connectors: ``http-poll``, ``http-webhook``, ``http-scrape``.

Each runs exactly one task, whatever ``tasks.max`` says: a poll's pages and cursor form one
ordered stream, a webhook's endpoint is one queue, and scrape targets are cheap enough for one
thread (run several connectors to spread many targets). See docs/connectors/http.md.
"""

from __future__ import annotations

import logging
from typing import Any

from connectors.http.config import HttpPollConfig, ScrapeConfig, WebhookConfig
from connectors.http.poll_task import HttpPollTask
from connectors.http.scrape_task import PrometheusScrapeTask
from connectors.http.webhook import WebhookSourceTask
from hub.api import SourceConnector

log = logging.getLogger(__name__)


class _SingleTaskConnector(SourceConnector):
    def start(self, config: Any) -> None:
        self.config = config
        log.info("[%s] started", self.name)

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [self.config.raw()]


class HttpPollConnector(_SingleTaskConnector):
    name = "http-poll"
    aliases = ("HttpPollSource", "HttpSource")
    config_model = HttpPollConfig
    description = "Poll an HTTP API on an interval or cron, with pagination and a cursor."

    @classmethod
    def task_class(cls) -> type[HttpPollTask]:
        return HttpPollTask


class HttpWebhookConnector(_SingleTaskConnector):
    name = "http-webhook"
    aliases = ("HttpWebhookSource", "WebhookSource")
    config_model = WebhookConfig
    description = "Receive JSON/NDJSON at POST /ingest/{connector}; 2xx once the broker acked."

    @classmethod
    def task_class(cls) -> type[WebhookSourceTask]:
        return WebhookSourceTask


class PrometheusScrapeConnector(_SingleTaskConnector):
    name = "http-scrape"
    aliases = ("PrometheusScrape", "PrometheusSource")
    config_model = ScrapeConfig
    description = "Scrape Prometheus text-format endpoints; one record per sample."

    @classmethod
    def task_class(cls) -> type[PrometheusScrapeTask]:
        return PrometheusScrapeTask
