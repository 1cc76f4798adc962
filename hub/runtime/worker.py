"""The Worker: runs this process's connector instances and tasks, reports their states.

It owns the clients its tasks share: ONE idempotent producer (acks=all) for every source task
and dead-letter queue (a background thread polls it, so delivery callbacks fire off the task
threads), and one ``KafkaAdmin`` (the shared admin layer). With
``exactly.once.source.support=enabled`` each source task has its own transactional producer
instead (``exactly_once_source_task``), and connectors with ``offsets.storage.topic`` get their
own offsets store (``offsets_for``). Sink tasks have their own consumer
each (a consumer is a group member). The herder decides *what* runs; the worker only starts
and stops.

Failure handling: a task whose thread dies is reported FAILED with its trace and restarted by a
timer after ``task.restart.backoff.ms``, doubling per consecutive failure up to
``task.restart.max.backoff.ms`` (``retry.restart_delay``; the count resets once a run
outlives the maximum backoff, or on a manual restart). Nothing else is touched: other tasks,
connectors and the worker go on.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Producer

from hub.api import ConfigError, SinkConnector, SourceConnector
from hub.api.paths import set_allowed_roots
from hub.runtime import task_count
from hub.runtime.config import ADMIN_TIMEOUT_S, WorkerConfig
from hub.runtime.config_providers import ConfigTransformer, reverse_transform
from hub.runtime.errors import NotFoundError
from hub.runtime.exactly_once_source_task import (
    ExactlyOnceWorkerSourceTask,
    fence_transactional_ids,
)
from hub.runtime.retry import restart_delay
from hub.runtime.storage.offset_store import ConnectorOffsetStores
from hub.runtime.worker_sink_task import WorkerSinkTask
from hub.runtime.worker_source_task import WorkerSourceTask
from hub.runtime.worker_task import ConnectorTaskId, TaskServices, WorkerTask
from kafka_admin import KafkaAdmin

log = logging.getLogger(__name__)


def connector_class(registry: Any, config: dict[str, str]) -> type[Any]:
    """The plugin class named by ``connector.class``; ConfigError if missing or unknown."""
    name = (config.get("connector.class") or "").strip()
    cls = lookup_plugin(registry.connectors(), name) if name else None
    if cls is None:
        reason = "Missing required configuration" if not name else f"no connector named {name!r}"
        raise ConfigError(f"invalid connector.class {name!r}", {"connector.class": [reason]})
    return cls


def lookup_plugin(index: dict[str, type[Any]], name: str) -> type[Any] | None:
    """Exact, then case-insensitive, then Kafka Connect's short forms of a class name.

    Kafka Connect also accepts the simple name of a connector class, with or without the
    ``Connector`` suffix (``FileStreamSink`` for ``org.apache...FileStreamSinkConnector``).
    """
    if name in index:
        return index[name]
    folded: dict[str, type[Any]] = {}
    for key, cls in index.items():
        simple = key.rsplit(".", 1)[-1]
        for form in (key, simple, simple.removesuffix("Connector")):
            folded.setdefault(form.lower(), cls)
    return folded.get(name.lower())


def connector_type(cls: type[Any]) -> str:
    return "sink" if issubclass(cls, SinkConnector) else "source"


class _ConnectorContext:
    def __init__(self, worker: Worker, name: str) -> None:
        self._worker, self._name = worker, name

    def request_task_reconfiguration(self) -> None:
        if self._worker.on_reconfigure is not None:
            self._worker.on_reconfigure(self._name)

    def raise_error(self, error: Exception) -> None:
        trace = "".join(traceback.format_exception(error))
        self._worker.status.put_connector(self._name, "FAILED", self._worker.worker_id, trace)


@dataclass
class _TaskSpec:
    """Everything needed to start a task again after a failure."""

    connector_config: dict[str, str]
    task_config: dict[str, Any]
    target: str
    failures: int = 0
    started_at: float = 0.0


class Worker:
    """Thread-safe; every public method may be called from any thread."""

    def __init__(
        self,
        config: WorkerConfig,
        registry: Any,
        offset_store: Any,
        status_store: Any,
        *,
        admin: KafkaAdmin | None = None,
    ) -> None:
        self.config = config
        # Plugins open local files only under file.allowed.paths (hub/api/paths.py).
        set_allowed_roots(config.file_roots())
        self.registry = registry
        # KIP-297: placeholders resolved only here, when a connector or task starts.
        self.config_transformer = ConfigTransformer.from_worker(config.raw())
        self._resolved: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
        self.offsets = offset_store
        self.status = status_store
        self.worker_id = config.worker_id
        self.admin = admin or KafkaAdmin(config.client_config("admin"), timeout=ADMIN_TIMEOUT_S)
        self.on_reconfigure: Callable[[str], None] | None = None
        self.member_alive: Callable[[], bool] | None = None  # the distributed herder's fence
        self._lock = threading.RLock()
        self._connectors: dict[str, Any] = {}
        self._tasks: dict[ConnectorTaskId, WorkerTask] = {}
        self._specs: dict[ConnectorTaskId, _TaskSpec] = {}
        self._timers: dict[ConnectorTaskId, threading.Timer] = {}
        self._producer: Producer | None = None
        self._stopping = threading.Event()
        self._poller: threading.Thread | None = None
        self._offset_stores = ConnectorOffsetStores(config, offset_store, self.admin)

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._producer = Producer(
            {
                # Defaults a worker's ``producer.*`` settings may override: Java's partitioner
                # (keyed records land where a Java client would put them) and a 5 ms linger,
                # which fills batches at high rates and adds at most 5 ms at low ones.
                "linger.ms": 5,
                "partitioner": "murmur2_random",
                **self.config.client_config("producer"),
                # Not overridable: the delivery guarantees rest on them.
                "enable.idempotence": True,
                "acks": "all",
            }
        )
        self._poller = threading.Thread(target=self._poll_producer, name="worker-producer")
        self._poller.daemon = True
        self._poller.start()
        self.services = TaskServices(
            self.config,
            self.registry,
            self._producer,
            self.admin,
            self.offsets,
            self.status,
            self.worker_id,
            connector_offsets=self.offsets_for,
            member_alive=self.member_alive,
        )
        log.info("worker started", extra={"worker_id": self.worker_id})

    def stop(self) -> None:
        """Stops every task (committing offsets) and connector, then flushes the producer."""
        with self._lock:
            ids = list(self._tasks)
            names = list(self._connectors)
        self.stop_tasks(ids)
        for name in names:
            self.stop_connector(name)
            self.status.put_connector(name, "UNASSIGNED", self.worker_id)
        self._offset_stores.stop()
        self._stopping.set()
        if self._poller is not None:
            self._poller.join(5)
        if self._producer is not None:
            self._producer.flush(self.config.offset_flush_timeout_ms / 1000)
            self._producer = self.services.producer = None
        log.info("worker stopped", extra={"worker_id": self.worker_id})

    def offsets_for(self, connector_config: Mapping[str, Any]) -> Any:
        """The offset store of a source connector: the global one, or its own topic
        (``offsets.storage.topic``) over it (``ConnectorOffsetStores``)."""
        return self._offset_stores.store_for(connector_config)

    def fence_zombies(self, connector: str, task_ids: range) -> None:
        """KIP-618's fencing of tasks a reconfiguration removed (exactly-once only)."""
        if self.config.exactly_once_enabled:
            fence_transactional_ids(self.config, connector, task_ids)

    def _poll_producer(self) -> None:
        assert self._producer is not None
        while not self._stopping.is_set():
            self._producer.poll(0.05)

    # -- connectors ----------------------------------------------------------------------------
    def start_connector(self, name: str, config: dict[str, str], target: str) -> bool:
        """Starts the connector instance (not when STOPPED); False (and FAILED) on error."""
        self.stop_connector(name)
        if target == "STOPPED":
            self.status.put_connector(name, "STOPPED", self.worker_id)
            return True
        try:
            cls = connector_class(self.registry, config)
            resolved = self.config_transformer.transform(config)
            connector = cls(_ConnectorContext(self, name))
            connector.start(cls.config_model.parse(resolved))
        except Exception as exc:
            log.error("connector failed to start", extra={"connector": name}, exc_info=True)
            trace = "".join(traceback.format_exception(exc))
            self.status.put_connector(name, "FAILED", self.worker_id, trace)
            return False
        with self._lock:
            self._connectors[name] = connector
            self._resolved[name] = (dict(config), resolved)
        state = "PAUSED" if target == "PAUSED" else "RUNNING"
        self.status.put_connector(name, state, self.worker_id)
        log.info("connector started", extra={"connector": name, "state": state})
        return True

    def connector_task_configs(
        self, name: str, max_tasks: int, enforce: bool = True
    ) -> list[dict[str, Any]]:
        """The running connector's task configs for ``max_tasks`` (its ``tasks.max``);
        ``TooManyTasksError`` beyond ``tasks.max.limit`` or, with ``enforce``, beyond
        ``max_tasks`` (``hub.runtime.task_count``)."""
        with self._lock:
            connector = self._connectors.get(name)
            raw, resolved = self._resolved.get(name, ({}, {}))
        if connector is None:
            raise NotFoundError(f"connector {name} is not running on this worker")
        limit = self.config.tasks_max_limit
        task_count.check_requested(name, max_tasks, limit)
        # Secrets the connector copied into its task configs go back to their placeholders
        # before the herder stores them.
        configs = [reverse_transform(c, raw, resolved) for c in connector.task_configs(max_tasks)]
        task_count.check_generated(name, configs, max_tasks, limit, enforce)
        return configs

    def running_connectors(self) -> list[str]:
        with self._lock:
            return sorted(self._connectors)

    def all_task_ids(self) -> list[ConnectorTaskId]:
        """Every task this worker runs or will restart after a failure."""
        with self._lock:
            return sorted(set(self._tasks) | set(self._specs))

    def is_running(self, name: str) -> bool:
        with self._lock:
            return name in self._connectors

    def stop_connector(self, name: str) -> None:
        with self._lock:
            connector = self._connectors.pop(name, None)
            self._resolved.pop(name, None)
        if connector is None:
            return
        try:
            connector.stop()
        except Exception:
            log.exception("connector failed to stop cleanly", extra={"connector": name})
        log.info("connector stopped", extra={"connector": name})

    def set_target_state(self, name: str, target: str) -> None:
        """PAUSED/STARTED for a running connector and its tasks."""
        if self.is_running(name):
            state = "PAUSED" if target == "PAUSED" else "RUNNING"
            self.status.put_connector(name, state, self.worker_id)
        with self._lock:
            tasks = [t for i, t in self._tasks.items() if i.connector == name]
            for id, spec in self._specs.items():
                if id.connector == name:
                    spec.target = target
        for task in tasks:
            task.transition_to(target)

    # -- tasks ---------------------------------------------------------------------------------
    def start_task(
        self,
        id: ConnectorTaskId,
        connector_config: dict[str, str],
        task_config: dict[str, Any],
        target: str,
    ) -> bool:
        with self._lock:
            spec = self._specs.get(id)
            if spec is None or spec.connector_config != connector_config:
                spec = _TaskSpec(dict(connector_config), dict(task_config), target)
            spec.task_config, spec.target = dict(task_config), target
            self._specs[id] = spec
        return self._launch(id, spec)

    def _launch(self, id: ConnectorTaskId, spec: _TaskSpec) -> bool:
        extra = {"connector": id.connector, "task": id.task}
        try:
            cls = connector_class(self.registry, spec.connector_config)
            runner: Any = WorkerSinkTask
            if not issubclass(cls, SinkConnector):
                runner = (
                    ExactlyOnceWorkerSourceTask
                    if self.config.exactly_once_enabled
                    else WorkerSourceTask
                )
            assert issubclass(cls, SinkConnector | SourceConnector)
            transform = self.config_transformer.transform
            task = runner(
                id,
                cls.task_class(),
                transform(spec.task_config),
                transform(spec.connector_config),
                self.services,
                self,
                spec.target,
            )
        except Exception as exc:
            log.error("task failed to start", extra=extra, exc_info=True)
            self.on_failure(id, "".join(traceback.format_exception(exc)))
            return False
        with self._lock:
            if self._specs.get(id) is not spec:
                return False  # stopped or reconfigured while a restart timer was firing
            if id in self._tasks:
                raise RuntimeError(f"task {id} is already running")
            self._tasks[id] = task
            spec.started_at = time.monotonic()
            task.start()
        log.info("task started", extra=extra)
        return True

    def stop_tasks(self, ids: list[ConnectorTaskId], forget: bool = True) -> None:
        """Stops tasks in parallel and waits (``task.shutdown.graceful.timeout.ms``)."""
        with self._lock:
            tasks = [t for i in ids if (t := self._tasks.pop(i, None)) is not None]
            for id in ids:
                timer = self._timers.pop(id, None)
                if timer is not None:
                    timer.cancel()
                if forget:
                    self._specs.pop(id, None)
        for task in tasks:
            task.stop()
        deadline = time.monotonic() + self.config.task_shutdown_graceful_timeout_ms / 1000
        for task in tasks:
            task.await_stop(max(0.0, deadline - time.monotonic()))

    def task_ids(self, name: str) -> list[ConnectorTaskId]:
        with self._lock:
            return sorted(i for i in set(self._tasks) | set(self._specs) if i.connector == name)

    def task(self, id: ConnectorTaskId) -> WorkerTask | None:
        with self._lock:
            return self._tasks.get(id)

    def restart_task(self, id: ConnectorTaskId) -> None:
        """Stops and starts one task with its current config; resets its backoff."""
        with self._lock:
            spec = self._specs.get(id)
        if spec is None:
            raise NotFoundError(f"task {id} is not assigned to this worker")
        self.stop_tasks([id], forget=False)
        spec.failures = 0
        self.status.put_task(id.connector, id.task, "RESTARTING", self.worker_id)
        self._launch(id, spec)

    # -- TaskStatusListener --------------------------------------------------------------------
    def on_startup(self, id: ConnectorTaskId) -> None:
        self.status.put_task(id.connector, id.task, "RUNNING", self.worker_id)

    def on_pause(self, id: ConnectorTaskId) -> None:
        self.status.put_task(id.connector, id.task, "PAUSED", self.worker_id)

    def on_resume(self, id: ConnectorTaskId) -> None:
        self.status.put_task(id.connector, id.task, "RUNNING", self.worker_id)

    def on_shutdown(self, id: ConnectorTaskId) -> None:
        self.status.put_task(id.connector, id.task, "UNASSIGNED", self.worker_id)

    def on_failure(self, id: ConnectorTaskId, trace: str) -> None:
        self.status.put_task(id.connector, id.task, "FAILED", self.worker_id, trace)
        with self._lock:
            spec = self._specs.get(id)
            if spec is None or self._stopping.is_set():
                return
            if time.monotonic() - spec.started_at > self.config.task_restart_max_backoff_ms / 1000:
                spec.failures = 0
            delay = restart_delay(
                spec.failures,
                self.config.task_restart_backoff_ms,
                self.config.task_restart_max_backoff_ms,
            )
            spec.failures += 1
            timer = threading.Timer(delay, self._auto_restart, (id, spec))
            timer.daemon = True
            old = self._timers.pop(id, None)
            if old is not None:
                old.cancel()
            self._timers[id] = timer
        log.warning(
            "task failed; restarting after backoff",
            extra={"connector": id.connector, "task": id.task, "backoff_ms": int(delay * 1000)},
        )
        timer.start()

    def _auto_restart(self, id: ConnectorTaskId, spec: _TaskSpec) -> None:
        with self._lock:
            if self._specs.get(id) is not spec or self._stopping.is_set():
                return
            self._timers.pop(id, None)
            task = self._tasks.get(id)
            if task is not None and not task.failed:
                return  # restarted by hand meanwhile
            self._tasks.pop(id, None)
        if task is not None:
            task.await_stop(self.config.task_shutdown_graceful_timeout_ms / 1000)
        log.info("restarting failed task", extra={"connector": id.connector, "task": id.task})
        self._launch(id, spec)
