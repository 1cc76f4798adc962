"""Settings shared by every HTTP mode that makes requests (poll and scrape).

The HTTP client settings (auth, TLS, timeouts, retries) are one mixin so poll and scrape spell
them the same way and the docs describe them once. ``headers`` and ``params`` accept a JSON
object (what the REST API stores, as config values are strings) or a mapping.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, field_validator

from hub.api import KAFKA_CONNECT, ConfigModel, Password


def _json_object(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return {}
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError("must be a JSON object") from None
        if not isinstance(value, dict):
            raise ValueError("must be a JSON object")
    return value


class HttpClientConfig(ConfigModel):
    """How to reach an endpoint: auth, TLS, timeouts and retry policy."""

    upstream_keys = KAFKA_CONNECT

    topic: str = Field(description="Topic every record is written to.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="Request headers, a JSON object; ${cursor} is templated."
    )
    auth_type: Literal["none", "basic", "bearer", "api_key"] = Field(
        "none", alias="auth.type", description="How to authenticate each request."
    )
    auth_username: str | None = Field(None, alias="auth.username", description="basic: user.")
    auth_password: Password | None = Field(
        None, alias="auth.password", description="basic: password."
    )
    auth_token: Password | None = Field(None, alias="auth.token", description="bearer: the token.")
    auth_api_key_name: str = Field(
        "X-API-Key", alias="auth.api.key.name", description="api_key: header or parameter name."
    )
    auth_api_key_value: Password | None = Field(
        None, alias="auth.api.key.value", description="api_key: the key."
    )
    auth_api_key_in: Literal["header", "query"] = Field(
        "header", alias="auth.api.key.in", description="api_key: sent as a header or a parameter."
    )
    tls_verify: bool = Field(
        True, alias="tls.verify", description="Verify the server certificate (keep true)."
    )
    tls_ca_file: str | None = Field(
        None, alias="tls.ca.file", description="PEM bundle of CAs to trust instead of the system's."
    )
    tls_client_cert: str | None = Field(
        None, alias="tls.client.cert", description="PEM client certificate (mutual TLS)."
    )
    tls_client_key: str | None = Field(
        None, alias="tls.client.key", description="PEM key of tls.client.cert."
    )
    timeout_connect_ms: int = Field(5000, alias="timeout.connect.ms", gt=0)
    timeout_read_ms: int = Field(30000, alias="timeout.read.ms", gt=0)
    retry_max_attempts: int = Field(
        5,
        alias="retry.max.attempts",
        ge=1,
        description="Attempts per request on 5xx/network errors before the task FAILS.",
    )
    retry_backoff_ms: int = Field(
        500, alias="retry.backoff.ms", ge=0, description="First retry delay; doubles each time."
    )
    retry_backoff_max_ms: int = Field(30000, alias="retry.backoff.max.ms", ge=0)
    rate_limit_max_wait_ms: int = Field(
        600_000,
        alias="rate.limit.max.wait.ms",
        ge=0,
        description="Longest Retry-After honoured on 429/503; longer waits are capped to this.",
    )

    @field_validator("headers", mode="before")
    @classmethod
    def _headers(cls, value: Any) -> Any:
        return _json_object(value)
