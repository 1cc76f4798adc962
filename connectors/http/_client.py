"""One HTTP exchange with the retry policy every requesting mode shares.

``Requester.send`` never sleeps: it returns a response, or raises ``RetryLater`` carrying how
long to wait, or a ``ConnectError`` for a failure retrying cannot fix. The task's ``poll``
then waits on its stop event in slices of at most a second and returns None meanwhile, so a
stop or pause is honoured during a long backoff and the worker thread never spins.

Classification (why each):
- 2xx: the data.
- 429, and 503 with ``Retry-After``: the server asked us to slow down; wait what it says
  (seconds or an HTTP-date, RFC 9110 section 10.2.3), capped by ``rate.limit.max.wait.ms``.
  These never exhaust the attempts: being rate limited is not a failure.
- other 5xx, 408, timeouts and connection errors: transient; exponential backoff from
  ``retry.backoff.ms`` up to ``retry.backoff.max.ms``. After ``retry.max.attempts`` the task
  FAILS with the status and a body excerpt; the worker restarts it after its own growing
  backoff, so a dead endpoint never becomes a tight loop.
- other 4xx: the request itself is wrong (auth, URL); retrying cannot help, fail at once.
"""

from __future__ import annotations

import email.utils
import logging
import time
from typing import Any

import httpx
from tenacity import RetryCallState, wait_exponential

from connectors.http._common import HttpClientConfig
from hub.api import ConnectError

log = logging.getLogger(__name__)

EXCERPT = 300


class RetryLater(Exception):
    """Not a failure: the request should be sent again after ``delay_s``."""

    def __init__(self, delay_s: float, reason: str) -> None:
        super().__init__(reason)
        self.delay_s = delay_s
        self.reason = reason


def excerpt(response: httpx.Response) -> str:
    text = response.text[:EXCERPT]
    return text.replace("\n", " ") + ("..." if len(response.content) > EXCERPT else "")


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After value (delta-seconds or HTTP-date); None if absent/invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def build_client(c: HttpClientConfig) -> httpx.Client:
    """An httpx client with the config's TLS, timeouts and auth (not its retries)."""
    verify: Any = c.tls_verify
    if c.tls_verify and c.tls_ca_file:
        import ssl

        verify = ssl.create_default_context(cafile=c.tls_ca_file)
    if c.tls_client_cert:
        import ssl

        ctx = verify if isinstance(verify, ssl.SSLContext) else ssl.create_default_context()
        if not c.tls_verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        ctx.load_cert_chain(c.tls_client_cert, c.tls_client_key)
        verify = ctx
    auth: httpx.Auth | None = None
    headers = dict(c.headers)
    params: dict[str, str] = {}
    if c.auth_type == "basic":
        auth = httpx.BasicAuth(c.auth_username or "", c.auth_password or "")
    elif c.auth_type == "bearer":
        headers["Authorization"] = f"Bearer {c.auth_token or ''}"
    elif c.auth_type == "api_key":
        target = headers if c.auth_api_key_in == "header" else params
        target[c.auth_api_key_name] = c.auth_api_key_value or ""
    timeout = httpx.Timeout(c.timeout_read_ms / 1000, connect=c.timeout_connect_ms / 1000)
    return httpx.Client(
        verify=verify, auth=auth, headers=headers, params=params, timeout=timeout,
        follow_redirects=True,
    )  # fmt: skip


class Requester:
    """Sends requests for one task and keeps the attempt count of the current request."""

    def __init__(self, config: HttpClientConfig, name: str) -> None:
        self.config = config
        self.name = name
        self.client = build_client(config)
        self.attempts = 0
        self._wait = wait_exponential(
            multiplier=config.retry_backoff_ms / 1000, max=config.retry_backoff_max_ms / 1000
        )

    def send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        c = self.config
        try:
            response = self.client.request(method, url, **kwargs)
        except httpx.TransportError as exc:
            self._transient(f"{method} {url}: {type(exc).__name__}: {exc}")
        status = response.status_code
        if 200 <= status < 300:
            self.attempts = 0
            return response
        wait = retry_after_seconds(response.headers.get("retry-after"))
        if status == 429 or (status == 503 and wait is not None):
            wanted = wait if wait is not None else self._backoff()
            delay = min(wanted, c.rate_limit_max_wait_ms / 1000)
            log.info("[%s] HTTP %d from %s; waiting %.1fs", self.name, status, url, delay)
            raise RetryLater(delay, f"HTTP {status}")
        if status >= 500 or status == 408:
            self._transient(f"HTTP {status} from {method} {url}: {excerpt(response)}")
        raise ConnectError(f"HTTP {status} from {method} {url}: {excerpt(response)}")

    def _transient(self, reason: str) -> Any:
        self.attempts += 1
        if self.attempts >= self.config.retry_max_attempts:
            attempts, self.attempts = self.attempts, 0
            raise ConnectError(f"giving up after {attempts} attempts: {reason}")
        delay = self._backoff()
        log.warning("[%s] %s; retry %d in %.1fs", self.name, reason, self.attempts, delay)
        raise RetryLater(delay, reason)

    def _backoff(self) -> float:
        """``retry.backoff.ms`` doubling per attempt up to ``retry.backoff.max.ms`` (tenacity's
        exponential wait, read for the current attempt: ``send`` never sleeps itself)."""
        state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
        state.attempt_number = max(1, self.attempts)
        return float(self._wait(state))

    def close(self) -> None:
        self.client.close()
