"""Typed configs of the three HTTP modes: ``http-poll``, ``http-webhook``, ``http-scrape``.

Config values arrive as strings (Kafka Connect's JSON), so structured values (``headers``,
``params``) are JSON objects in a string and lists are comma-separated. Cross-field rules
(a pagination style needs its pointer, cron and interval exclude each other) are checked in
``parse`` so the REST API's 400 names the offending key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import Field, field_validator

from connectors.http._common import HttpClientConfig, _json_object
from hub.api import KAFKA_CONNECT, ConfigError, ConfigModel, Password

Pagination = Literal["none", "link_header", "next_url", "cursor", "offset", "page"]


class HttpPollConfig(HttpClientConfig):
    """Settings of ``http-poll``: one endpoint, polled on a schedule."""

    url: str = Field(description="Endpoint URL; ${cursor} is replaced by the incremental cursor.")
    method: Literal["GET", "POST", "PUT"] = Field("GET", description="HTTP method.")
    params: dict[str, str] = Field(
        default_factory=dict, description="Query parameters (JSON object); ${cursor} templated."
    )
    body: str | None = Field(None, description="Request body (e.g. JSON); ${cursor} templated.")
    records_format: Literal["json", "ndjson"] = Field(
        "json", alias="records.format", description="Response body: one JSON document or NDJSON."
    )
    records_pointer: str = Field(
        "",
        alias="records.pointer",
        description="JSON pointer (/data/items) or dotted path (data.items) to the record list; "
        "empty = the whole body (a list gives one record per element).",
    )
    key_field: str | None = Field(
        None, alias="key.field", description="Pointer/path in a record to its key."
    )
    timestamp_field: str | None = Field(
        None,
        alias="timestamp.field",
        description="Pointer/path to the record time (epoch s/ms or ISO-8601); "
        "absent = the time the response arrived.",
    )
    pagination_type: Pagination = Field("none", alias="pagination.type")
    pagination_next_pointer: str = Field(
        "/next", alias="pagination.next.pointer", description="next_url: body field of the link."
    )
    pagination_cursor_pointer: str = Field(
        "/next_cursor",
        alias="pagination.cursor.pointer",
        description="cursor: body field holding the next page token (null/empty = last page).",
    )
    pagination_cursor_param: str = Field("cursor", alias="pagination.cursor.param")
    pagination_offset_param: str = Field("offset", alias="pagination.offset.param")
    pagination_page_param: str = Field("page", alias="pagination.page.param")
    pagination_page_start: int = Field(1, alias="pagination.page.start", ge=0)
    pagination_limit_param: str | None = Field(
        "limit", alias="pagination.limit.param", description="Page-size parameter (offset, page)."
    )
    pagination_limit: int = Field(100, alias="pagination.limit", gt=0)
    pagination_max_pages: int = Field(
        10_000, alias="pagination.max.pages", gt=0, description="Safety cap per poll."
    )
    incremental_field: str | None = Field(
        None,
        alias="incremental.field",
        description="Pointer/path of the cursor field (updated_at, id): the source offset.",
    )
    incremental_initial: str = Field(
        "", alias="incremental.initial", description="${cursor} before anything was committed."
    )
    incremental_mode: Literal["inclusive", "exclusive"] = Field(
        "inclusive",
        alias="incremental.mode",
        description="inclusive: the API returns cursor >= value; records equal to the committed "
        "cursor that were already sent are skipped (no loss, no repeats). exclusive: cursor > "
        "value (records sharing the last value that arrive later are missed).",
    )
    poll_interval_ms: int = Field(60_000, alias="poll.interval.ms", gt=0)
    poll_cron: str | None = Field(
        None, alias="poll.cron", description="Crontab (5 fields, UTC) instead of the interval."
    )

    @field_validator("params", mode="before")
    @classmethod
    def _params(cls, value: Any) -> Any:
        return _json_object(value)

    @field_validator("poll_cron")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value:
            from apscheduler.triggers.cron import CronTrigger

            try:
                CronTrigger.from_crontab(value, timezone="UTC")
            except ValueError as exc:
                raise ValueError(f"not a valid crontab: {exc}") from None
        return value or None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        config = super().parse(raw)
        errors: dict[str, list[str]] = {}
        if not config.url.startswith(("http://", "https://")):
            errors["url"] = ["must start with http:// or https://"]
        if config.auth_type == "bearer" and not config.auth_token:
            errors["auth.token"] = ["required when auth.type=bearer"]
        if config.auth_type == "api_key" and not config.auth_api_key_value:
            errors["auth.api.key.value"] = ["required when auth.type=api_key"]
        if errors:
            raise ConfigError(f"invalid {cls.__name__}", errors)
        return config


class WebhookConfig(ConfigModel):
    """Settings of ``http-webhook``: records POSTed to ``/ingest/{connector}``."""

    upstream_keys = KAFKA_CONNECT

    topic: str = Field(description="Topic every record is written to.")
    key_field: str | None = Field(None, alias="key.field", description="Pointer/path to the key.")
    timestamp_field: str | None = Field(None, alias="timestamp.field")
    auth_token: Password | None = Field(
        None, alias="webhook.auth.token", description="Require Authorization: Bearer <token>."
    )
    hmac_secret: Password | None = Field(
        None,
        alias="webhook.hmac.secret",
        description="Require an HMAC-SHA256 of the raw body, hex, in webhook.hmac.header.",
    )
    hmac_header: str = Field("X-Signature-256", alias="webhook.hmac.header")
    hmac_prefix: str = Field(
        "sha256=", alias="webhook.hmac.prefix", description="Prefix before the hex digest."
    )
    max_body_bytes: int = Field(
        10 << 20, alias="webhook.max.body.bytes", gt=0, description="Larger bodies get 413."
    )
    max_records: int = Field(100_000, alias="webhook.max.records", gt=0)
    value_format: Literal["json", "text"] = Field(
        "json",
        alias="webhook.value.format",
        description="json: each record's parsed data goes to the value converter. text: its "
        "JSON text as a string (pair with value.converter=StringConverter: no re-encoding, "
        "the fastest path; the body is still validated).",
    )
    ack_timeout_ms: int = Field(
        30_000,
        alias="webhook.ack.timeout.ms",
        gt=0,
        description="Longest wait for the broker's acknowledgement before answering 503.",
    )


class ScrapeConfig(HttpClientConfig):
    """Settings of ``http-scrape``: Prometheus text-format targets on an interval."""

    targets: list[str] = Field(description="Comma-separated URLs (e.g. http://host:9100/metrics).")
    scrape_interval_ms: int = Field(15_000, alias="scrape.interval.ms", gt=0)
    job: str | None = Field(None, description="Adds tag job=<value> to every sample.")
    add_instance_tag: bool = Field(
        True, alias="scrape.instance.tag", description="Add tag instance=<host:port> as Prometheus."
    )
    retry_max_attempts: int = Field(
        3, alias="retry.max.attempts", ge=1, description="Failed scrapes are logged, not fatal."
    )

    @field_validator("targets", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value
