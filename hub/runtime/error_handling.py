"""Retries, ``errors.tolerance``, error logging and the dead-letter queue, for both task kinds.

Kafka Connect's ``RetryWithToleranceOperator`` in one class: each record-level operation
(converting a key/value/header, running the transform chain) runs through ``execute``:

- ``RetriableError`` is retried with exponential backoff (100 ms doubling, capped at
  ``errors.retry.delay.max.ms``) until ``errors.retry.timeout`` (0 = no retry, -1 = forever);
  the policy is ``hub.runtime.retry.operation_backoff`` (tenacity).
- Any other failure (or a retriable one out of time) with ``errors.tolerance=none`` raises
  ``ToleranceExceededError``, which fails the task; with ``all`` the record is skipped,
  logged if ``errors.log.enable`` and written to ``errors.deadletterqueue.topic.name``.

Unlike Kafka Connect the DLQ also serves source tasks: their failed record has no bytes yet
(conversion may be what failed), so its key and value are written as JSON text and the
``__connect.errors.topic`` header names the topic it was meant for. Sink records keep their
original bytes and headers, plus ``__connect.errors.{topic,partition,offset}``.
"""

from __future__ import annotations

import json
import logging
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hub.api import ConfigError, ConnectRecord
from hub.runtime.errors import ToleranceExceededError
from hub.runtime.retry import operation_backoff

log = logging.getLogger(__name__)
T = TypeVar("T")

HEADER_PREFIX = "__connect.errors."
STAGES = (
    "KEY_CONVERTER",
    "VALUE_CONVERTER",
    "HEADER_CONVERTER",
    "TRANSFORMATION",
    "TASK_PUT",
    "TASK_POLL",
    "KAFKA_PRODUCE",
    "KAFKA_CONSUME",
)


@dataclass(frozen=True)
class ErrorHandlingConfig:
    tolerance: str = "none"
    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60_000
    log_enable: bool = False
    log_include_messages: bool = False
    dlq_topic: str = ""
    dlq_replication_factor: int = -1
    dlq_context_headers: bool = False

    @classmethod
    def from_connector_config(cls, config: Mapping[str, Any]) -> ErrorHandlingConfig:
        """Reads the ``errors.*`` keys; ConfigError names each bad one."""
        errors: dict[str, list[str]] = {}

        def num(key: str, default: int) -> int:
            try:
                return int(config.get(key, default))
            except (TypeError, ValueError):
                errors[key] = ["must be an integer"]
                return default

        def flag(key: str) -> bool:
            value = str(config.get(key, "false")).strip().lower()
            if value not in ("true", "false"):
                errors[key] = ["must be true or false"]
            return value == "true"

        tolerance = str(config.get("errors.tolerance", "none")).strip().lower()
        if tolerance not in ("none", "all"):
            errors["errors.tolerance"] = ["must be one of: none, all"]
        result = cls(
            tolerance=tolerance,
            retry_timeout_ms=num("errors.retry.timeout", 0),
            retry_delay_max_ms=num("errors.retry.delay.max.ms", 60_000),
            log_enable=flag("errors.log.enable"),
            log_include_messages=flag("errors.log.include.messages"),
            dlq_topic=str(config.get("errors.deadletterqueue.topic.name", "")).strip(),
            dlq_replication_factor=num("errors.deadletterqueue.topic.replication.factor", -1),
            dlq_context_headers=flag("errors.deadletterqueue.context.headers.enable"),
        )
        if errors:
            raise ConfigError("invalid error handling config", errors)
        return result


@dataclass
class FailureContext:
    """What is known about the record being processed when a stage fails."""

    stage: str
    executing_class: str = ""
    source: ConnectRecord | None = None  # source tasks: the record as polled
    raw: Any = None  # sink tasks: the consumed confluent_kafka.Message


DlqWriter = Callable[[str, bytes | None, bytes | None, list[tuple[str, bytes | None]]], None]


class RetryWithToleranceOperator:
    """Runs record operations under the connector's error policy. One per task (one thread)."""

    def __init__(
        self,
        config: ErrorHandlingConfig,
        connector: str,
        task: int,
        *,
        stopping: threading.Event,
        dlq: DlqWriter | None = None,
    ) -> None:
        self.config = config
        self.connector = connector
        self.task = task
        self.stopping = stopping
        self.dlq = dlq
        self.failures = 0  # tolerated failures, for tests and metrics
        # Connect's task-error-metrics (GET /metrics); this task's thread is the only writer.
        self.retries = 0
        self.errors_logged = 0
        self.dlq_requests = 0
        self.dlq_failures = 0

    def run(
        self,
        stage: str,
        plugin: object,
        function: Callable[..., T],
        *args: Any,
        raw: Any = None,
        source: ConnectRecord | None = None,
    ) -> tuple[bool, T | None]:
        """``execute`` with a cheap happy path: no context object unless ``function`` fails."""
        try:
            return True, function(*args)
        except Exception as exc:
            context = FailureContext(stage, type(plugin).__name__, source=source, raw=raw)
            return self.execute(context, lambda: function(*args), first_error=exc)

    def execute(
        self,
        context: FailureContext,
        operation: Callable[[], T],
        first_error: Exception | None = None,
    ) -> tuple[bool, T | None]:
        """(True, result) on success; (False, None) if the record failed and is tolerated.

        ``first_error`` is the failure of an attempt the caller already made.
        """
        pending = [first_error] if first_error is not None else []

        def attempt() -> T:
            if pending:
                raise pending.pop()  # the attempt the caller made
            return operation()

        def note(state: Any) -> None:
            error = state.outcome.exception() if state.outcome else None
            self.retries += 1
            log.debug("retrying", extra=self._ident(context, error))

        policy = operation_backoff(
            self.stopping,
            self.config.retry_timeout_ms,
            self.config.retry_delay_max_ms,
            before_sleep=note,
        )
        try:
            return True, policy(attempt)
        except Exception as error:
            self._fail(context, error)
            return False, None

    def report(self, context: FailureContext, error: Exception) -> None:
        """A failure the caller will not retry (an errant record a sink task reported):
        tolerated -> logged and dead-lettered per config; otherwise raises
        ToleranceExceededError."""
        self._fail(context, error)

    def _fail(self, context: FailureContext, error: Exception) -> None:
        if self.config.tolerance != "all":
            raise ToleranceExceededError(
                f"Tolerance exceeded in error handler (stage {context.stage})"
            ) from error
        self.failures += 1
        if self.config.log_enable:
            self.errors_logged += 1
            extra = self._ident(context, error)
            if self.config.log_include_messages:
                extra["record"] = _describe(context)
            log.error("error processing record", extra=extra)
        if self.config.dlq_topic and self.dlq is not None:
            self._report_dlq(context, error)

    def _report_dlq(self, context: FailureContext, error: Exception) -> None:
        headers: list[tuple[str, bytes | None]] = []
        if context.raw is not None:
            msg = context.raw
            key, value = msg.key(), msg.value()
            headers.extend(msg.headers() or [])
        else:
            record = context.source
            key = _json_bytes(record.key) if record is not None else None
            value = _json_bytes(record.value) if record is not None else None
        if self.config.dlq_context_headers:
            headers.extend(self._context_headers(context, error))
        self.dlq_requests += 1
        try:
            self.dlq(self.config.dlq_topic, key, value, headers)  # type: ignore[misc]
        except Exception:
            self.dlq_failures += 1
            log.exception("could not write to the dead letter queue", extra=self._ident(context))

    def _context_headers(
        self, context: FailureContext, error: Exception
    ) -> list[tuple[str, bytes | None]]:
        values: dict[str, Any] = {}
        if context.raw is not None:
            msg = context.raw
            values.update(topic=msg.topic(), partition=msg.partition(), offset=msg.offset())
        elif context.source is not None:
            values["topic"] = context.source.topic
            if context.source.partition is not None:
                values["partition"] = context.source.partition
        values.update(
            {
                "connector.name": self.connector,
                "task.id": self.task,
                "stage": context.stage,
                "class.name": context.executing_class,
                "exception.class.name": _qualname(type(error)),
                "exception.message": str(error),
                "exception.stacktrace": "".join(traceback.format_exception(error)),
            }
        )
        return [(HEADER_PREFIX + k, str(v).encode()) for k, v in values.items()]

    def _ident(self, context: FailureContext, error: Exception | None = None) -> dict[str, Any]:
        extra: dict[str, Any] = {
            "connector": self.connector,
            "task": self.task,
            "stage": context.stage,
        }
        if error is not None:
            extra["error"] = f"{type(error).__name__}: {error}"
        return extra


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _json_bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    return json.dumps(value, default=str).encode()


def _describe(context: FailureContext) -> str:
    if context.raw is not None:
        msg = context.raw
        return f"topic={msg.topic()} partition={msg.partition()} offset={msg.offset()}"
    if context.source is not None:
        return f"topic={context.source.topic} key={context.source.key!r}"
    return ""
