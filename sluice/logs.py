"""Structured, quiet-by-default logging for every Sluice process.

One line per event, ``key=value`` pairs after the message, so logs stay greppable and parseable
without a JSON dependency. The level comes from ``--log-level`` or ``SLUICE_LOG_LEVEL``
(default WARNING for CLI tools, INFO for long-running servers).
"""

from __future__ import annotations

import logging
import os
import sys
import time

_RESERVED = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


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
