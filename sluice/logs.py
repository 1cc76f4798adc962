"""Structured, quiet-by-default logging for every Sluice process.

One line per event, ``key=value`` pairs after the message, so logs stay greppable and parseable
without a JSON dependency. The level comes from ``--log-level`` or ``SLUICE_LOG_LEVEL``
(default WARNING for CLI tools, INFO for long-running servers).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time

_RESERVED = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}
_DIGITS = re.compile(r"\d+")


class KeyValueFormatter(logging.Formatter):
    """Formats ``ts level logger message key=value ...``; extra fields come from ``extra=``."""

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        parts = [
            f"{ts}.{int(record.msecs):03d}Z",
            record.levelname.lower(),
            record.name,
            record.getMessage(),
        ]
        for key, value in record.__dict__.items():
            if key not in _RESERVED and not key.startswith("_"):
                text = str(value)
                parts.append(f"{key}={text!r}" if " " in text else f"{key}={text}")
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def setup_logging(default_level: str = "WARNING", level: str | None = None) -> None:
    """Installs the key=value formatter on the root logger (idempotent)."""
    chosen = (level or os.environ.get("SLUICE_LOG_LEVEL") or default_level).upper()
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_sluice", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(KeyValueFormatter())
    handler._sluice = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(chosen)


LIBRDKAFKA_LOGGER = "librdkafka"
LIBRDKAFKA_REPEAT_S = 60.0  # one line per distinct librdkafka message (digits aside) per minute
_SEEN_MAX = 1024


class _LibrdkafkaFilter(logging.Filter):
    """Throttles and demotes what librdkafka (confluent-kafka's C core) logs through us.

    librdkafka repeats a failing connection's error on every reconnect attempt (hundreds of
    lines a minute against a broker that is down or being stopped) and rates a dropped
    connection ERROR although the client retries it and reports real failures through its
    own callbacks and exceptions. So: its warnings and errors become WARNING, its notices
    DEBUG, and one message (with numbers masked: ports, ids, milliseconds) is let through once
    per ``LIBRDKAFKA_REPEAT_S``. Thread-safe enough: a lost race prints one line twice.
    """

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        level = logging.WARNING if record.levelno >= logging.WARNING else logging.DEBUG
        record.levelno, record.levelname = level, logging.getLevelName(level)
        if not logging.getLogger(record.name).isEnabledFor(level):
            return False
        key = _DIGITS.sub("#", record.getMessage())
        now = time.monotonic()
        last = self._seen.get(key)
        if last is not None and now - last < LIBRDKAFKA_REPEAT_S:
            return False
        if len(self._seen) >= _SEEN_MAX:
            self._seen.clear()
        self._seen[key] = now
        return True


def librdkafka_logger() -> logging.Logger:
    """The logger to pass as confluent-kafka's ``logger`` setting (throttled, demoted).

    With it, librdkafka's lines reach our key=value handler instead of raw ``%3|...`` lines on
    stderr, and only when the client is polled, so a client that is done (and no longer
    polled) stays quiet while the broker it used goes away.
    """
    logger = logging.getLogger(LIBRDKAFKA_LOGGER)
    if not any(isinstance(f, _LibrdkafkaFilter) for f in logger.filters):
        logger.addFilter(_LibrdkafkaFilter())
    return logger
