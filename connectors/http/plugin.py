"""Registers the HTTP connectors through the same pluggy hook a third-party plugin uses."""

from __future__ import annotations

from connectors.http.connector import (
    HttpPollConnector,
    HttpWebhookConnector,
    PrometheusScrapeConnector,
)


def sluice_connectors() -> list[type]:
    """``http-poll``, ``http-webhook`` and ``http-scrape``."""
    return [HttpPollConnector, HttpWebhookConnector, PrometheusScrapeConnector]
