"""Errors a connector, transform or converter raises, and what the worker does with them.

Tree::

    ConnectError            the task fails (FAILED state, trace in the status) unless tolerated
    ├── RetriableError      transient: the worker retries the same call with backoff
    │                       (``errors.retry.timeout``), then treats it as a ConnectError
    ├── DataError           one record cannot be converted/transformed: subject to
    │                       ``errors.tolerance`` and the dead-letter queue, not a task failure
    │                       when tolerated
    ├── ConfigError         a config is invalid; carries per-field messages for HTTP 400
    └── PathNotAllowedError a path outside ``file.allowed.paths`` (``hub.api.paths``); also a
                            ``PermissionError``, so code that skips unreadable files skips it
"""

from __future__ import annotations


class ConnectError(Exception):
    """Base of every error in the connector API."""


class RetriableError(ConnectError):
    """A failure that may go away if the same operation is retried (network blip, lock)."""


class DataError(ConnectError):
    """A single record could not be converted or transformed."""


class ConfigError(ConnectError):
    """A configuration is invalid. ``errors`` maps each bad field to its reasons."""

    def __init__(self, message: str, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.errors: dict[str, list[str]] = errors or {}


class PathNotAllowedError(ConnectError, PermissionError):
    """A path outside ``file.allowed.paths`` (also an OSError, so file-scanning code that skips
    unreadable entries skips these too)."""
