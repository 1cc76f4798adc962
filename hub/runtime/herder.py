"""The Herder: the REST API's one entry point, deciding what runs (docs/contracts.md).

Semantics are Kafka Connect's standalone mode with topic-backed stores: this worker runs every
connector, and connector configs, target states, task configs, source offsets and statuses all
live in compacted topics, so a restarted worker (same topics) resumes every connector in its
last target state from its committed offsets. Changing or restarting one connector stops and
starts only that connector's instance and tasks.

Thread safety: every public method takes one re-entrant lock, so REST calls (FastAPI's thread
pool) and task-reconfiguration requests from connector threads are serialised; the work they
start runs on task threads, and the lock is never held while waiting on a task's data flow
(stopping a task waits at most ``task.shutdown.graceful.timeout.ms``).
"""

from __future__ import annotations

import logging
import threading
import traceback
from typing import Any

from hub.api import ConfigError
from hub.runtime import connector_offsets as offsets_api
from hub.runtime import health, names, task_count, validation
from hub.runtime.config import ADMIN_TIMEOUT_S, WorkerConfig
from hub.runtime.errors import AlreadyExistsError, BadRequestError, ConflictError, NotFoundError
from hub.runtime.storage import (
    ConfigStore,
    KafkaConfigStore,
    KafkaOffsetStore,
    KafkaStatusStore,
    OffsetStore,
    StatusStore,
)
from hub.runtime.worker import Worker, connector_class, connector_type
from hub.runtime.worker_task import ConnectorTaskId
from kafka_admin import KafkaAdmin

log = logging.getLogger(__name__)


class Herder:
    def __init__(
        self,
        config: WorkerConfig,
        *,
        registry: Any = None,
        config_store: ConfigStore | None = None,
        offset_store: OffsetStore | None = None,
        status_store: StatusStore | None = None,
        admin: KafkaAdmin | None = None,
    ) -> None:
        if registry is None:
            from hub.plugins.manager import get_plugin_manager

            registry = get_plugin_manager()
        self.config = config
        self.registry = registry
        self.admin = admin or KafkaAdmin(config.client_config("admin"), timeout=ADMIN_TIMEOUT_S)
        client = config.client_config("admin")
        rf = config.internal_topic_replication_factor
        self.configs = config_store or KafkaConfigStore(
            config.config_storage_topic, client, replication_factor=rf, admin=self.admin
        )
        self.offsets = offset_store or KafkaOffsetStore(
            config.offset_storage_topic, client, partitions=config.offset_storage_partitions,
            replication_factor=rf, admin=self.admin,
        )  # fmt: skip
        self.statuses = status_store or KafkaStatusStore(
            config.status_storage_topic, client, partitions=config.status_storage_partitions,
            replication_factor=rf, admin=self.admin,
        )  # fmt: skip
        self.worker = Worker(config, registry, self.offsets, self.statuses, admin=self.admin)
        self.worker.on_reconfigure = self._request_reconfiguration
        self.worker_id = config.worker_id
        self._lock = threading.RLock()
        self._cluster_id = ""
        self._stopped = False
        self._ready = False  # start() finished: what GET /health reports (KIP-1017)

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Loads the stores (read to end), then starts every connector in its target state."""
        for store in (self.configs, self.offsets, self.statuses):
            store.start()
        self._cluster_id = self.admin.cluster_id()
        self.worker.start()
        with self._lock:
            for name in self.configs.connectors():
                try:  # one connector that cannot start must not keep the others down
                    self._start(name)
                except Exception as exc:
                    self._fail_connector(name, "connector failed to start", exc)
        self._ready = True
        log.info("herder started", extra={"connectors": len(self.configs.connectors())})

    def stop(self) -> None:
        """Stops tasks (committing offsets) and connectors, then the stores. Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self.worker.stop()
            for store in (self.statuses, self.offsets, self.configs):
                try:
                    store.stop()
                except Exception:
                    log.exception("store did not stop cleanly")

    def _start(self, name: str) -> None:
        config = self.configs.connector_config(name)
        target = self.configs.target_state(name)
        if config is None or not self.worker.start_connector(name, config, target):
            return
        if target == "STOPPED":
            self._forget_tasks(name, 0)
            return
        task_configs = self._generate_task_configs(name, config, "generate tasks")
        if task_configs is None:
            return
        previous = len(self.configs.task_configs(name))
        if task_configs != self.configs.task_configs(name):
            self.configs.put_task_configs(name, task_configs)
        if self._type(config) == "source":
            self.worker.fence_zombies(name, range(len(task_configs), previous))
        self._forget_tasks(name, len(task_configs))
        for i, task_config in enumerate(task_configs):
            self.worker.start_task(ConnectorTaskId(name, i), config, task_config, target)

    def _generate_task_configs(
        self, name: str, config: dict[str, Any], what: str
    ) -> list[dict[str, Any]] | None:
        """The running connector's task configs for its ``tasks.max``, or None after failing
        the connector (``what`` names the step in its trace: "generate tasks", ...)."""
        try:
            return self.worker.connector_task_configs(
                name, task_count.requested(config), task_count.enforced(config)
            )
        except Exception as exc:
            self._fail_connector(name, f"connector failed to {what}", exc)
            return None

    def _fail_connector(self, name: str, what: str, exc: BaseException) -> None:
        """Stops the connector instance and reports it FAILED with the trace; nothing else
        (other connectors, this connector's config) is touched."""
        log.error(what, extra={"connector": name, "error": str(exc)}, exc_info=exc)
        self.worker.stop_connector(name)
        trace = "".join(traceback.format_exception(exc))
        self.statuses.put_connector(name, "FAILED", self.worker_id, trace)

    def _stop(self, name: str) -> None:
        self.worker.stop_tasks(self.worker.task_ids(name))
        self.worker.stop_connector(name)

    def _forget_tasks(self, name: str, keep: int) -> None:
        for index in self.statuses.tasks(name):
            if index >= keep:
                self.statuses.remove_task(name, index)

    def _request_reconfiguration(self, name: str) -> None:
        # Called on a connector's own thread: reconfigure on another so it may return at once.
        threading.Thread(target=self._reconfigure, args=(name,), daemon=True).start()

    def _reconfigure(self, name: str) -> None:
        with self._lock:
            try:
                self._reconfigure_locked(name)
            except Exception as exc:  # on a thread of its own: nobody else would see it
                self._fail_connector(name, "connector failed to reconfigure its tasks", exc)

    def _reconfigure_locked(self, name: str) -> None:
        config = self.configs.connector_config(name)
        if config is None or not self.worker.is_running(name):
            return
        new = self.worker.connector_task_configs(
            name, task_count.requested(config), task_count.enforced(config)
        )
        if new == self.configs.task_configs(name):
            return
        log.info("task configs changed; restarting tasks", extra={"connector": name})
        self.worker.stop_tasks(self.worker.task_ids(name))
        previous = len(self.configs.task_configs(name))
        self.configs.put_task_configs(name, new)
        if self._type(config) == "source":
            self.worker.fence_zombies(name, range(len(new), previous))
        self._forget_tasks(name, len(new))
        target = self.configs.target_state(name)
        for i, task_config in enumerate(new):
            self.worker.start_task(ConnectorTaskId(name, i), config, task_config, target)

    def health(self) -> dict[str, str]:
        """``GET /health`` (KIP-1017): ``{"status", "message"}`` (``hub.runtime.health``)."""
        loops = health.store_loops((self.configs, self.offsets, self.statuses))
        return health.check(self._ready, self._stopped, loops, self._lock).as_json()

    # -- connectors ----------------------------------------------------------------------------
    def kafka_cluster_id(self) -> str:
        return self._cluster_id

    def connectors(self) -> list[str]:
        return self.configs.connectors()

    def _config(self, name: str) -> dict[str, str]:
        config = self.configs.connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    def _type(self, config: dict[str, str]) -> str:
        try:
            return connector_type(connector_class(self.registry, config))
        except ConfigError:
            return "unknown"

    def connector_info(self, name: str) -> dict[str, Any]:
        config = self._config(name)
        tasks = [
            {"connector": name, "task": i} for i in range(len(self.configs.task_configs(name)))
        ]
        return {"name": name, "config": config, "tasks": tasks, "type": self._type(config)}

    def _validated(self, name: str, config: dict[str, str]) -> dict[str, str]:
        reason = names.problem(name) or ("must not start or end with whitespace"
                                         if name != name.strip() else None)  # fmt: skip
        if reason is not None:
            raise BadRequestError(f"Connector name {name[:80]!r} {reason}")
        config = {str(k): str(v) for k, v in config.items()}
        if config.get("name", name) != name:
            raise BadRequestError(f"connector name in config ({config['name']}) differs ({name})")
        config["name"] = name
        cls = connector_class(self.registry, config)
        errors = self._errors(cls, config)
        if errors:
            count = sum(len(v) for v in errors.values())
            raise ConfigError(
                f"Connector configuration is invalid and contains {count} error(s)", errors
            )
        return config

    def create_connector(
        self, name: str, config: dict[str, str], initial_state: str = "STARTED"
    ) -> dict[str, Any]:
        """``initial_state`` (KIP-980): STARTED, PAUSED or STOPPED (no tasks, offsets editable)."""
        with self._lock:
            if self.configs.connector_config(name) is not None:
                raise AlreadyExistsError(f"Connector {name} already exists")
            config = self._validated(name, config)
            self.configs.put_connector_config(name, config)
            self.configs.put_target_state(name, initial_state)
            self._start(name)
            log.info("connector created", extra={"connector": name})
            return self.connector_info(name)

    def put_connector_config(self, name: str, config: dict[str, str]) -> tuple[bool, dict]:
        with self._lock:
            if self.configs.connector_config(name) is None:
                return True, self.create_connector(name, config)
            config = self._validated(name, config)
            self._stop(name)
            self.configs.put_connector_config(name, config)
            self._start(name)
            log.info("connector reconfigured", extra={"connector": name})
            return False, self.connector_info(name)

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> dict[str, Any]:
        with self._lock:
            config: dict[str, str] = self._config(name)
            for key, value in patch.items():
                if value is None:
                    config.pop(key, None)
                else:
                    config[key] = value
            return self.put_connector_config(name, config)[1]

    def connector_config(self, name: str) -> dict[str, str]:
        return self._config(name)

    def delete_connector(self, name: str) -> None:
        with self._lock:
            self._config(name)
            self._stop(name)
            tasks = len(self.configs.task_configs(name))
            self.configs.remove_connector_config(name)
            self.statuses.remove_connector(name, tasks)
            log.info("connector deleted", extra={"connector": name})

    def connector_status(self, name: str) -> dict[str, Any]:
        config = self._config(name)
        connector = self.statuses.connector(name) or {"state": "UNASSIGNED"}
        count = len(self.configs.task_configs(name))
        tasks = self.statuses.tasks(name)
        return {
            "name": name,
            "connector": _status_view(connector, self.worker_id),
            "tasks": [
                {
                    "id": i,
                    **_status_view(tasks.get(i, {"state": "UNASSIGNED"}), self.worker_id),
                    **self._task_warnings(name, i),
                }
                for i in range(count)
            ],
            "type": self._type(config),
        }

    def _task_warnings(self, name: str, task: int) -> dict[str, list[str]]:
        """``{"warnings": [...]}`` while a running task's background work (offset commits)
        fails, else nothing: the status keeps Connect's shape when all is well."""
        running = self.worker.task(ConnectorTaskId(name, task))
        warnings = running.warnings() if running is not None else []
        return {"warnings": warnings} if warnings else {}

    def task_configs(self, name: str) -> list[dict[str, Any]]:
        self._config(name)
        return [
            {"id": {"connector": name, "task": i}, "config": c}
            for i, c in enumerate(self.configs.task_configs(name))
        ]

    def task_status(self, name: str, task: int) -> dict[str, Any]:
        for entry in self.connector_status(name)["tasks"]:
            if entry["id"] == task:
                return entry
        raise NotFoundError(f"Task {name}-{task} not found")

    # -- target states and restarts --------------------------------------------------------------
    def pause_connector(self, name: str) -> None:
        self._set_target(name, "PAUSED")

    def resume_connector(self, name: str) -> None:
        self._set_target(name, "STARTED")

    def stop_connector(self, name: str) -> None:
        with self._lock:
            self._config(name)
            self.configs.put_target_state(name, "STOPPED")
            self._stop(name)
            self.configs.put_task_configs(name, [])
            self._forget_tasks(name, 0)
            self.statuses.put_connector(name, "STOPPED", self.worker_id)
            log.info("connector stopped", extra={"connector": name})

    def _set_target(self, name: str, target: str) -> None:
        with self._lock:
            self._config(name)
            previous = self.configs.target_state(name)
            self.configs.put_target_state(name, target)
            if previous == "STOPPED" or not self.worker.is_running(name):
                self._stop(name)
                self._start(name)
            else:
                self.worker.set_target_state(name, target)
            log.info("connector target state", extra={"connector": name, "target": target})

    def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        with self._lock:
            config = self._config(name)
            status = self.connector_status(name)
            restart_connector = not only_failed or status["connector"]["state"] == "FAILED"
            tasks = [
                t["id"]
                for t in status["tasks"]
                if include_tasks and (not only_failed or t["state"] == "FAILED")
            ]
            if restart_connector:
                self.statuses.put_connector(name, "RESTARTING", self.worker_id)
            for task in tasks:
                self.statuses.put_task(name, task, "RESTARTING", self.worker_id)
            snapshot = self.connector_status(name) if include_tasks else None
            target = self.configs.target_state(name)
            if restart_connector:
                self.worker.start_connector(name, config, target)
            for task in tasks:
                self._restart_task(name, task)
            return snapshot

    def restart_task(self, name: str, task: int) -> None:
        with self._lock:
            self.task_status(name, task)
            self._restart_task(name, task)

    def _restart_task(self, name: str, task: int) -> None:
        id = ConnectorTaskId(name, task)
        if id in self.worker.task_ids(name):
            self.worker.restart_task(id)
            return
        configs = self.configs.task_configs(name)
        self.worker.start_task(
            id, self._config(name), configs[task], self.configs.target_state(name)
        )

    # -- offsets and topics --------------------------------------------------------------------
    def connector_offsets(self, name: str) -> dict[str, Any]:
        config = self._config(name)
        if self._type(config) == "sink":
            return offsets_api.sink_offsets(self.admin, name)
        return offsets_api.source_offsets(self.worker.offsets_for(config), name)

    def _require_stopped(self, name: str) -> dict[str, str]:
        config = self._config(name)
        if self.configs.target_state(name) != "STOPPED" or self.worker.task_ids(name):
            raise ConflictError(
                "Connectors must be in the STOPPED state before their offsets can be modified. "
                f"This can be done for the specified connector by issuing a 'PUT' request to "
                f"the '/connectors/{name}/stop' endpoint"
            )
        return config

    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        with self._lock:
            config = self._require_stopped(name)
            if self._type(config) == "sink":
                return offsets_api.alter_sink_offsets(self.admin, name, offsets)
            return offsets_api.alter_source_offsets(self.worker.offsets_for(config), name, offsets)

    def reset_connector_offsets(self, name: str) -> str:
        with self._lock:
            config = self._require_stopped(name)
            if self._type(config) == "sink":
                return offsets_api.reset_sink_offsets(self.admin, name)
            return offsets_api.reset_source_offsets(self.worker.offsets_for(config), name)

    def connector_topics(self, name: str) -> list[str]:
        self._config(name)
        return self.statuses.topics(name)

    def reset_connector_topics(self, name: str) -> None:
        self._config(name)
        self.statuses.remove_topics(name)

    # -- workers -------------------------------------------------------------------------------
    def members(self) -> dict[str, Any]:
        """``GET /workers``: this worker and what it runs (a group's view in distributed mode)."""
        units = list(self.worker.running_connectors())
        units += [str(t) for t in self.worker.all_task_ids()]
        url = f"{self.config.rest_scheme}://{self.worker_id}"
        return {
            "worker_id": self.worker_id,
            "url": url,
            "leader_url": None,
            "rebalancing": False,
            "members": {url: units},
        }

    def put_task_configs(self, name: str, configs: list[dict[str, Any]]) -> None:
        """Only distributed workers accept task configs from another worker."""
        raise BadRequestError("a standalone worker does not accept task configs from others")

    # -- plugins -------------------------------------------------------------------------------
    def plugins(self, connectors_only: bool = True) -> list[dict[str, Any]]:
        return validation.list_plugins(self.registry, connectors_only)

    def plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        cls = validation.find_plugin(self.registry, plugin)
        return validation.key_infos(cls.config_model, cls.name)

    def plugin_config_schema(self, plugin: str) -> dict[str, Any]:
        """JSON Schema of a plugin's config model (user-facing key names): enum choices and
        types that Connect's ``ConfigKeyInfo`` cannot carry (the console's form uses them)."""
        cls = validation.find_plugin(self.registry, plugin)
        model: Any = getattr(cls, "config_model", None)
        schema: dict[str, Any] = model.json_schema() if model is not None else {}
        return schema

    def validate_config(self, plugin: str, config: dict[str, str]) -> dict[str, Any]:
        config = {str(k): str(v) for k, v in config.items()}
        config.setdefault("connector.class", plugin)
        try:
            cls = connector_class(self.registry, {"connector.class": plugin})
        except ConfigError:
            raise NotFoundError(f"Unknown connector plugin {plugin}") from None
        errors = self._errors(cls, config)
        return validation.config_infos(cls, config, errors)

    def _errors(self, cls: Any, config: dict[str, str]) -> dict[str, list[str]]:
        """Validation errors of the config as the connector will see it: placeholders
        (``${file:...}``) resolved, as Kafka Connect validates, with every resolved secret
        masked in the reasons (a reason may quote the value it refuses)."""
        resolved = self.worker.config_transformer.transform(config)
        errors = validation.connector_errors(self.registry, self.config, cls, resolved)
        secrets = [v for k, v in resolved.items() if v != config.get(k) and v]
        if not secrets:
            return errors
        masked = {}
        for key, reasons in errors.items():
            for secret in secrets:
                reasons = [r.replace(secret, "[hidden]") for r in reasons]
            masked[key] = reasons
        return masked


def _status_view(status: dict[str, Any], worker_id: str) -> dict[str, Any]:
    view = {
        "state": status.get("state", "UNASSIGNED"),
        "worker_id": status.get("worker_id", worker_id),
    }
    if status.get("trace"):
        view["trace"] = status["trace"]
    return view
