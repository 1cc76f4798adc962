"""The worker's health as Kafka Connect's ``GET /health`` reports it (KIP-1017).

Three answers, with Connect's status words and messages:

- ``healthy``: the herder finished starting (internal topics read to their end, connectors
  resumed), its readers keep up, and it can take a request within ``HEALTH_TIMEOUT_S``;
- ``starting``: start-up has not finished (the REST API may be served before it has);
- ``unhealthy``: an internal-topic reader or the status writes keep failing (the broker is
  unreachable, say), the herder is stopping, or it has been busy longer than the timeout
  (Connect's check also waits 10 s for the herder's thread).

The details name the part that is failing, never the error itself: ``/health`` answers without
credentials (probes cannot send them), and errors can carry addresses or names of data.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

HEALTH_TIMEOUT_S = 10.0
HEALTHY = "Worker has completed startup and is ready to handle requests."
STARTING = "Worker is still starting up."
UNHEALTHY = "Worker was unable to handle this request and may be unable to handle other requests."


@dataclass(frozen=True)
class Health:
    status: str  # healthy | starting | unhealthy
    message: str

    def as_json(self) -> dict[str, str]:
        return {"status": self.status, "message": self.message}


def store_loops(stores: Iterable[Any]) -> list[Any]:
    """The ``LoopHealth`` of each store's reader (``KafkaBasedLog``) and writer, where it has
    them (in-memory stores have none)."""
    loops = []
    for store in stores:
        for loop in (getattr(getattr(store, "log", None), "health", None),
                     getattr(store, "health", None)):  # fmt: skip
            if loop is not None:
                loops.append(loop)
    return loops


def check(
    ready: bool,
    stopping: bool,
    parts: Iterable[Any],
    lock: Any = None,
    timeout: float = HEALTH_TIMEOUT_S,
) -> Health:
    """The worker's health. ``parts`` are the ``LoopHealth`` of its background loops (a
    ``failure`` while failing, a ``work`` naming it); ``lock`` is the herder's, taken and
    released once to prove the herder still answers."""
    if stopping:
        return Health("unhealthy", f"{UNHEALTHY} The worker is stopping.")
    failing = [str(part.work) for part in parts if part.failure is not None]
    if not ready:
        detail = f" Waiting for: {', '.join(failing)}." if failing else ""
        return Health("starting", STARTING + detail)
    if failing:
        return Health("unhealthy", f"{UNHEALTHY} Failing: {', '.join(failing)}.")
    if lock is not None and not _answers(lock, timeout):
        return Health(
            "unhealthy", f"{UNHEALTHY} The herder has been busy for more than {timeout:.0f}s."
        )
    return Health("healthy", HEALTHY)


def _answers(lock: threading.RLock | threading.Lock, timeout: float) -> bool:
    if not lock.acquire(timeout=timeout):
        return False
    lock.release()
    return True
