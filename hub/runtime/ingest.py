"""Finding the running task that accepts ``POST /ingest/{connector}`` (webhook connectors).

Why no new plumbing: a webhook connector's task is an ordinary ``SourceTask`` run by
``WorkerSourceTask``. Records it receives are queued inside the task and returned by its
``poll()``, so they go through the same transforms, converters, idempotent acks=all producer,
error handling and dead-letter queue as every source; the task learns that a poll result was
wholly acknowledged through ``SourceTask.commit_records`` and only then answers its requests.
The runtime's one job is to route a request to that task object, which this module does
through the worker's public accessors (``task_ids``, ``task``) without changing the worker.

An *ingest target* is any running source task object with (duck-typed, so ``hub.api`` needs no
new class and connectors import nothing from the runtime):

- ``max_body_bytes: int``: larger bodies are refused with 413 before they are read;
- ``authenticates: bool``: True if the connector checks its own token or signature;
- ``ingest(body: bytes, headers: Mapping[str, str]) -> (status, json_body, headers)``: blocks
  until the broker acknowledged every record (or answers an error status);
- optionally ``async ingest_async(body, headers)``, the same answer awaited on the REST
  server's event loop, which the route prefers: no pool thread waits for the broker.

Lookup errors carry an HTTP status for the REST layer: 404 unknown connector or one that takes
no webhooks, 503 (with Retry-After) when the connector is paused, stopped, failed or starting.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from hub.runtime.errors import IngestUnavailable

log = logging.getLogger(__name__)


class IngestTarget(Protocol):
    max_body_bytes: int
    authenticates: bool

    def ingest(
        self, body: bytes, headers: Mapping[str, str]
    ) -> tuple[int, dict[str, Any], dict[str, str]]: ...


def find_target(herder: Any, connector: str) -> IngestTarget:
    """The ingest target of ``connector`` on this worker; IngestUnavailable otherwise."""
    if connector not in herder.connectors():
        raise IngestUnavailable(404, f"Connector {connector} not found")
    worker = herder.worker
    tasks = [worker.task(i) for i in worker.task_ids(connector)]
    running = [t for t in tasks if t is not None and not t.failed and not t.stopping.is_set()]
    if not running:
        raise IngestUnavailable(503, f"Connector {connector} has no running task", 5)
    candidate = running[0]
    task = getattr(candidate, "task", None)
    if task is None:  # the worker thread is still creating and starting it
        if not hasattr(candidate, "task"):
            raise IngestUnavailable(404, f"Connector {connector} does not accept webhooks")
        raise IngestUnavailable(503, f"Connector {connector} is starting", 1)
    if not callable(getattr(task, "ingest", None)):
        raise IngestUnavailable(404, f"Connector {connector} does not accept webhooks")
    if candidate.paused:
        raise IngestUnavailable(503, f"Connector {connector} is paused", 5)
    if not hasattr(task, "config"):  # constructed but ``start`` has not finished
        raise IngestUnavailable(503, f"Connector {connector} is starting", 1)
    return task  # type: ignore[no-any-return]
