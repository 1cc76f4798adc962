"""The runtime's retry and backoff policies, expressed with tenacity.

Three places back off, each with its own rule (all exponential, doubling, capped):

- ``put`` raising ``RetriableError``: the same batch again after 0.1 s, 0.2 s, ... up to 10 s,
  until it is accepted or the task stops (``put_backoff``).
- record operations raising ``RetriableError`` under ``errors.retry.timeout``: 0.1 s doubling
  up to ``errors.retry.delay.max.ms``, as long as the next attempt starts within the timeout
  (``operation_backoff``; 0 = no retry, -1 = forever).
- a failed task's automatic restart: ``task.restart.backoff.ms`` doubling per consecutive
  failure up to ``task.restart.max.backoff.ms`` (``restart_delay``; scheduled on a timer, so
  only the delay rule is used here).

Every wait is ``stopping.wait``: a task asked to stop leaves its backoff at once
(``StopRetrying``) instead of sleeping it out.
"""

from __future__ import annotations

import threading
from typing import Any

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_any,
    stop_before_delay,
    stop_never,
    stop_when_event_set,
    wait_exponential,
)

from hub.api import RetriableError
from hub.runtime.errors import StopRetrying

INITIAL_DELAY_S = 0.1
PUT_MAX_DELAY_S = 10.0


def _sleeper(stopping: threading.Event) -> Any:
    def sleep(seconds: float) -> None:
        if stopping.wait(seconds):
            raise StopRetrying

    return sleep


def _waiter(stopping: threading.Event) -> Any:
    """Waits like ``time.sleep`` but returns early when the task stops (the next attempt then
    runs at once and, failing, ends the retries)."""

    def sleep(seconds: float) -> None:
        stopping.wait(seconds)

    return sleep


def put_backoff(stopping: threading.Event, before_sleep: Any = None) -> Retrying:
    """Retries ``RetriableError`` forever (0.1 s doubling, at most 10 s apart) until stopped;
    other errors pass through at once. Raises ``StopRetrying`` when stopped in a wait."""
    return Retrying(
        retry=retry_if_exception_type(RetriableError),
        wait=wait_exponential(multiplier=INITIAL_DELAY_S, max=PUT_MAX_DELAY_S),
        stop=stop_never,  # only stopping ends it, in the wait (``_sleeper``)
        sleep=_sleeper(stopping),
        before_sleep=before_sleep,
        reraise=True,
    )


def operation_backoff(
    stopping: threading.Event, timeout_ms: int, max_delay_ms: int, before_sleep: Any = None
) -> Retrying:
    """``errors.retry.timeout`` / ``errors.retry.delay.max.ms`` for record operations.

    Retries ``RetriableError`` while the next attempt would start within ``timeout_ms`` of the
    first (-1: forever, 0: never); re-raises the last error when it gives up or when the task
    stops."""
    if timeout_ms == 0:
        stop: Any = stop_after_attempt(1)
    elif timeout_ms < 0:
        stop = stop_when_event_set(stopping)
    else:
        stop = stop_any(stop_when_event_set(stopping), stop_before_delay(timeout_ms / 1000))
    return Retrying(
        retry=retry_if_exception_type(RetriableError),
        wait=wait_exponential(multiplier=INITIAL_DELAY_S, max=max(max_delay_ms, 0) / 1000),
        stop=stop,
        sleep=_waiter(stopping),
        before_sleep=before_sleep,
        reraise=True,
    )


def restart_delay(failures: int, backoff_ms: int, max_backoff_ms: int) -> float:
    """Seconds before restarting a task after its ``failures + 1``-th consecutive failure."""
    wait = wait_exponential(multiplier=backoff_ms / 1000, max=max_backoff_ms / 1000)
    return delay_for(wait, failures + 1)


def delay_for(wait: Any, attempt: int) -> float:
    """The delay a tenacity wait strategy gives after attempt number ``attempt`` (1-based)."""
    state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
    state.attempt_number = attempt
    return float(wait(state))


__all__ = [
    "StopRetrying",
    "delay_for",
    "operation_backoff",
    "put_backoff",
    "restart_delay",
]
