"""What source and sink tasks share: one thread, a target state, and status reporting.

Each task runs on its own daemon thread, so a task that blocks or raises affects nothing but
itself. The thread's life: ``initialize`` (clients, the connector's task object, its
``start``), then ``execute`` until ``stop()``; any exception escaping either marks the task
FAILED with its trace through the listener (the worker then schedules a restart), and
``close`` always runs to release clients. ``stop()`` only sets flags and asks the connector's
task to wake up; ``await_stop`` joins with a deadline, so a task stuck in a connector call
cannot hang the worker's shutdown.
"""

from __future__ import annotations

import logging
import threading
import traceback
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hub.runtime.background import LoopHealth
from hub.runtime.task_metrics import TaskMetrics

log = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class ConnectorTaskId:
    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


class TaskStatusListener(Protocol):
    """Receives state changes; called from the task's thread (or from ``transition_to``)."""

    def on_startup(self, id: ConnectorTaskId) -> None: ...
    def on_pause(self, id: ConnectorTaskId) -> None: ...
    def on_resume(self, id: ConnectorTaskId) -> None: ...
    def on_failure(self, id: ConnectorTaskId, trace: str) -> None: ...
    def on_shutdown(self, id: ConnectorTaskId) -> None: ...


class WorkerTask(ABC):
    """Base of ``WorkerSourceTask`` and ``WorkerSinkTask``."""

    def __init__(
        self, id: ConnectorTaskId, listener: TaskStatusListener, initial_state: str = "STARTED"
    ) -> None:
        self.id = id
        self.listener = listener
        self.stopping = threading.Event()
        self.failed = False
        self.fenced = False
        self.member_alive: Any = None
        """``() -> bool`` in distributed mode (``hub.runtime.distributed``): False once this
        worker may no longer be a member of its group, so another may run this task."""
        self._paused = initial_state == "PAUSED"
        self._state = threading.Condition()
        self._thread: threading.Thread | None = None
        self.log_extra = {"connector": id.connector, "task": id.task}
        # Offset commits that fail are retried at the next interval; this keeps their log
        # lines rate-limited and their state visible in the task's status (``warnings``).
        self.commit_health = LoopHealth("offset commit", log, self.log_extra)
        self.metrics = TaskMetrics()
        """Connect's task metrics (``GET /metrics``), written by this task's thread only."""

    def warnings(self) -> list[str]:
        """Background work of this task that is failing right now, one line each."""
        failure = self.commit_health.failure
        return [failure.describe()] if failure is not None else []

    def fence_lost(self) -> bool:
        """True once this worker's group membership may have lapsed (a frozen or cut-off
        worker whose session expired): the task then stops at once, writing and committing
        nothing more, because another worker may already run it. Checked before every produce
        batch, sink delivery and offset commit; always False outside distributed mode."""
        if self.fenced:
            return True
        if self.member_alive is None or self.member_alive():
            return False
        self.fenced = True
        self.stopping.set()
        log.warning("group membership lapsed; task stops without writing", extra=self.log_extra)
        return True

    @property
    def paused(self) -> bool:
        return self._paused

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"task-{self.id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Asks the task to stop; returns at once (see ``await_stop``)."""
        self.stopping.set()
        with self._state:
            self._state.notify_all()
        self.wake()

    def await_stop(self, timeout: float) -> bool:
        if self._thread is None:
            return True
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("task did not stop in time", extra=self.log_extra)
            return False
        return True

    def transition_to(self, state: str) -> None:
        """Target state STARTED or PAUSED; a paused task stops processing but keeps its clients."""
        with self._state:
            paused = state == "PAUSED"
            if paused == self._paused:
                return
            self._paused = paused
            self._state.notify_all()
        if paused:
            self.listener.on_pause(self.id)
        else:
            self.listener.on_resume(self.id)
        self.wake()

    def wait_while_paused(self, timeout: float | None = None) -> bool:
        """Blocks while paused; False once stopping."""
        with self._state:
            if self._paused and not self.stopping.is_set():
                self._state.wait(timeout)
        return not self.stopping.is_set()

    def _run(self) -> None:
        try:
            self.initialize()
            if self._paused:
                self.listener.on_pause(self.id)
            else:
                self.listener.on_startup(self.id)
            self.execute()
        except BaseException as exc:
            self.failed = True
            log.error("task failed", extra={**self.log_extra, "error": repr(exc)}, exc_info=True)
            self.listener.on_failure(self.id, "".join(traceback.format_exception(exc)))
        finally:
            try:
                self.close()
            except Exception:
                log.exception("task did not close cleanly", extra=self.log_extra)
            if not self.failed and not self.fenced:
                self.listener.on_shutdown(self.id)

    @abstractmethod
    def initialize(self) -> None:
        """Creates clients and the connector's task object and calls its ``start``."""

    @abstractmethod
    def execute(self) -> None:
        """The processing loop; returns once ``stopping`` is set."""

    @abstractmethod
    def close(self) -> None:
        """Final commit and release of every resource; runs even after a failure."""

    def wake(self) -> None:  # noqa: B027 - optional
        """Interrupts a blocking call of the task (``SourceTask.stop`` for sources)."""


@dataclass
class TaskServices:
    """What the worker lends its tasks: shared clients and stores (all thread-safe)."""

    worker_config: Any
    registry: Any
    producer: Any  # the worker's one idempotent confluent_kafka.Producer
    admin: Any  # kafka_admin.KafkaAdmin
    offset_store: Any
    status_store: Any
    worker_id: str = ""
    connector_offsets: Any = None
    member_alive: Any = None
    """``() -> bool``: the worker's group-membership fence (distributed mode), else None."""
    """``(connector config) -> offset store``: the connector's own offsets topic
    (``offsets.storage.topic``) over the global store; None = always the global store."""

    def offsets_for(self, connector_config: Mapping[str, Any]) -> Any:
        """The offset store a source connector reads and writes."""
        if self.connector_offsets is None:
            return self.offset_store
        return self.connector_offsets(connector_config)

    def dlq_writer(
        self, topic: str, key: bytes | None, value: bytes | None, headers: list[Any]
    ) -> None:
        """Produces one dead-letter record (topic created on first use)."""
        self.admin.ensure_topic(topic)
        self.producer.produce(topic, key=key, value=value, headers=headers)
