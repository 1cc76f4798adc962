"""One summary line per minute for client errors uvicorn would log once per connection.

uvicorn writes a WARNING on its ``uvicorn.error`` logger for every malformed request ("Invalid
HTTP request received.", an unsupported upgrade, ...): a scanner or a broken client sending
thousands a minute buries every other line of the worker's log. ``throttle_client_errors``
puts a filter on that logger which hands each such WARNING to a ``ThrottledLog``: the first of
each kind per interval is logged in full (logger ``hub.rest.client_errors``), the rest are
counted into one summary line. ERRORs (a failing application) are not touched.

Process-wide and idempotent: both ways of serving the API (``RestServer`` and ``sluice up``)
call it, as often as they like.
"""

from __future__ import annotations

import logging
import threading

from sluice.throttled_log import ThrottledLog

UVICORN_LOGGER = "uvicorn.error"
log = logging.getLogger(__name__)

_installed: ThrottledLogFilter | None = None
_lock = threading.Lock()


class ThrottledLogFilter(logging.Filter):
    """Drops uvicorn's per-request WARNINGs after routing them through a ``ThrottledLog``."""

    def __init__(self, throttled: ThrottledLog) -> None:
        super().__init__()
        self.throttled = throttled

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING:
            return True
        message = record.getMessage()
        self.throttled.event(message, message)
        return False


def throttle_client_errors(interval_s: float = 60.0) -> ThrottledLogFilter:
    """Installs the filter once per process; returns it (tests flush it)."""
    global _installed
    with _lock:
        if _installed is None:
            _installed = ThrottledLogFilter(
                ThrottledLog(log, "malformed HTTP requests", interval_s=interval_s)
            )
            logging.getLogger(UVICORN_LOGGER).addFilter(_installed)
        return _installed
