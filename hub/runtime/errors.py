"""Errors the runtime (herder, worker, tasks, stores) raises.

Tree::

    HubRuntimeError                 root of the runtime's errors
    ├── HerderError                 the herder cannot do what was asked
    │   ├── NotFoundError           no such connector / task (also a ``LookupError``)
    │   ├── AlreadyExistsError      a connector name is taken
    │   ├── ConflictError           e.g. a rebalance is in progress, or the connector must be
    │   │                           STOPPED first (offset changes)
    │   ├── BadRequestError         a malformed request beyond config validation
    │   └── ForwardedError          the group leader answered a forwarded request with an
    │                               error: ``status`` and ``body`` are its answer, passed on
    ├── WorkerConfigError           the worker's settings are invalid; ``errors`` names each bad
    │                               key (Kafka Connect's name) with its reasons
    ├── ToleranceExceededError      a record failed and ``errors.tolerance`` does not allow
    │                               skipping it: the task fails (also a ``hub.api.ConnectError``)
    ├── KafkaLogError               an internal-topic write was not acknowledged, or its reader
    │   │                           did not catch up in time (``KafkaBasedLog``)
    │   └── RecordTooLargeError     the record is larger than the producer or broker accepts
    ├── TooManyTasksError           a connector asks for (or generated) more tasks than it may
    │                               run (``hub.runtime.task_count``): the connector fails
    ├── IngestUnavailable           a webhook request cannot be routed to a running task;
    │                               ``status`` and ``retry_after`` say what to answer
    ├── StopRetrying                the task began stopping while it waited to retry (control
    │                               flow inside ``hub.runtime.retry``; never escapes a task)
    └── TopicsOwnedError            a live group of other workers owns the internal topics

Config problems are ``hub.api.ConfigError`` (with per-field reasons); an unknown plugin name
is ``hub.plugins.errors.PluginNotFoundError``. How herder errors answer over HTTP is the REST
layer's business (``hub.rest.errors``), not the runtime's.
"""

from __future__ import annotations

from typing import Any

from hub.api import ConnectError


class HubRuntimeError(Exception):
    """Root of the runtime's errors."""


class HerderError(HubRuntimeError):
    """The herder cannot do what was asked (the message says why)."""


class NotFoundError(HerderError, LookupError):
    pass


class AlreadyExistsError(HerderError):
    pass


class ConflictError(HerderError):
    pass


class BadRequestError(HerderError):
    pass


class ForwardedError(HerderError):
    """The leader's error answer to a request this worker forwarded (distributed mode)."""

    def __init__(self, status: int, body: Any) -> None:
        message = body.get("message") if isinstance(body, dict) else None
        super().__init__(str(message or f"the leader answered {status}"))
        self.status = status
        self.body = body


class WorkerConfigError(HubRuntimeError, ValueError):
    """Invalid worker settings: ``errors`` maps each bad key to its reasons."""

    def __init__(self, message: str, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or {}


class ToleranceExceededError(HubRuntimeError, ConnectError):
    """A record failed and ``errors.tolerance`` does not allow skipping it: the task fails."""


class KafkaLogError(HubRuntimeError):
    """A write was not acknowledged, or the reader did not catch up in time."""


class RecordTooLargeError(KafkaLogError):
    """The record exceeds ``message.max.bytes`` of the producer or the broker."""


class TooManyTasksError(HubRuntimeError):
    """More tasks than ``tasks.max`` or the worker's ``tasks.max.limit`` allow."""


class IngestUnavailable(HubRuntimeError):
    """The request cannot be routed; ``status`` and ``retry_after`` say what to answer."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


class StopRetrying(HubRuntimeError):
    """The task began stopping while it waited to retry."""


class TopicsOwnedError(HubRuntimeError):
    """The internal topics belong to a live group of other workers: this worker must not start
    their connectors a second time (``hub.runtime.distributed.ownership``)."""
