"""An in-memory Herder implementing the contract in docs/contracts.md, for REST unit tests.

This is a test double of the runtime, not a second runtime: it exists so tests of the HTTP
translation layer (paths, status codes, bodies, error shapes, auth) run in milliseconds and do
not depend on the worker, the broker or plugin discovery. It keeps only enough behaviour to
make the REST layer's answers meaningful: states, per-field config errors, offsets that can
change only when STOPPED, and the error classes the real herder raises. Integration tests of
the real herder behind the same app live beside the hub fixture.
"""

from __future__ import annotations

import threading
from typing import Any

from hub.api.errors import ConfigError
from hub.runtime.errors import AlreadyExistsError, BadRequestError, ConflictError, NotFoundError

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
PLUGINS = [
    {"class": SOURCE, "type": "source", "version": "0.1.0"},
    {"class": SINK, "type": "sink", "version": "0.1.0"},
    {"class": "org.apache.kafka.connect.transforms.Filter", "type": "transformation"},
    {"class": "org.apache.kafka.connect.json.JsonConverter", "type": "converter"},
]
ALIASES = {"FileStreamSource": SOURCE, "FileStreamSink": SINK, SOURCE: SOURCE, SINK: SINK}
REQUIRED = {SOURCE: ("topic", "file"), SINK: ("topics", "file")}
WORKER = "127.0.0.1:8083"


def _key(name: str, required: bool, doc: str) -> dict[str, Any]:
    return {
        "name": name,
        "type": "STRING",
        "required": required,
        "default_value": None,
        "importance": "HIGH",
        "documentation": doc,
        "group": "Common",
        "order_in_group": 0,
        "width": "NONE",
        "display_name": name,
        "dependents": [],
    }


class FakeHerder:
    """Thread-safe (one lock) like the real herder; ``calls`` records each call for asserts."""

    worker_id = WORKER

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._configs: dict[str, dict[str, str]] = {}
        self._states: dict[str, str] = {}
        self._tasks: dict[str, list[dict[str, Any]]] = {}
        self._offsets: dict[str, list[dict[str, Any]]] = {}
        self._topics: dict[str, set[str]] = {}
        self.calls: list[tuple[Any, ...]] = []

    # -- helpers for tests -------------------------------------------------------------------

    def fail_task(self, name: str, task: int, trace: str = "RuntimeError: boom") -> None:
        with self._lock:
            self._tasks[name][task].update(state="FAILED", trace=trace)

    # -- the contract ------------------------------------------------------------------------

    def members(self) -> dict[str, Any]:
        """``GET /workers``: one standalone worker running every task."""
        with self._lock:
            units = [
                *self._tasks,
                *(f"{n}-{i}" for n, t in self._tasks.items() for i in range(len(t))),
            ]
        url = f"http://{WORKER}"
        return {"worker_id": WORKER, "url": url, "leader_url": None, "rebalancing": False,
                "members": {url: units}}  # fmt: skip

    def put_task_configs(self, name: str, configs: list[dict[str, Any]]) -> None:
        """Standalone, like the real herder: task configs come from no other worker."""
        raise BadRequestError("a standalone worker does not accept task configs from others")

    def kafka_cluster_id(self) -> str:
        return "fake-cluster-id"

    def connectors(self) -> list[str]:
        with self._lock:
            return sorted(self._configs)

    def connector_info(self, name: str) -> dict[str, Any]:
        with self._lock:
            return self._info(name)

    def create_connector(
        self, name: str, config: dict[str, str], initial_state: str = "STARTED"
    ) -> dict[str, Any]:
        self.calls.append(("create_connector", name, config))
        with self._lock:
            if name in self._configs:
                raise AlreadyExistsError(f"Connector {name} already exists")
            self._store(name, config)
            return self._info(name)

    def put_connector_config(
        self, name: str, config: dict[str, str]
    ) -> tuple[bool, dict[str, Any]]:
        self.calls.append(("put_connector_config", name, config))
        with self._lock:
            created = name not in self._configs
            self._store(name, config)
            return created, self._info(name)

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> dict[str, Any]:
        self.calls.append(("patch_connector_config", name, patch))
        with self._lock:
            merged = dict(self._config(name))
            for key, value in patch.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            self._store(name, merged)
            return self._info(name)

    def connector_config(self, name: str) -> dict[str, str]:
        with self._lock:
            return dict(self._config(name))

    def delete_connector(self, name: str) -> None:
        self.calls.append(("delete_connector", name))
        with self._lock:
            self._config(name)
            for table in (self._configs, self._states, self._tasks, self._offsets, self._topics):
                table.pop(name, None)  # type: ignore[attr-defined]

    def connector_status(self, name: str) -> dict[str, Any]:
        with self._lock:
            return self._status(name)

    def task_configs(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            config = self._config(name)
            return [
                {"id": {"connector": name, "task": task["id"]}, "config": dict(config)}
                for task in self._tasks[name]
            ]

    def task_status(self, name: str, task: int) -> dict[str, Any]:
        with self._lock:
            self._config(name)
            for entry in self._tasks[name]:
                if entry["id"] == task:
                    return dict(entry)
            raise NotFoundError(f"Task {name}-{task} not found")

    def pause_connector(self, name: str) -> None:
        self._set_state(name, "PAUSED")

    def resume_connector(self, name: str) -> None:
        self._set_state(name, "RUNNING")

    def stop_connector(self, name: str) -> None:
        self._set_state(name, "STOPPED")

    def restart_connector(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        self.calls.append(("restart_connector", name, include_tasks, only_failed))
        with self._lock:
            self._config(name)
            if include_tasks:
                for task in self._tasks[name]:
                    if not only_failed or task["state"] == "FAILED":
                        task.update(state="RESTARTING")
                        task.pop("trace", None)
                return self._status(name)
            return None

    def restart_task(self, name: str, task: int) -> None:
        self.calls.append(("restart_task", name, task))
        self.task_status(name, task)

    def connector_offsets(self, name: str) -> dict[str, Any]:
        with self._lock:
            self._config(name)
            return {"offsets": [dict(entry) for entry in self._offsets[name]]}

    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        self.calls.append(("alter_connector_offsets", name, offsets))
        with self._lock:
            self._require_stopped(name)
            current = {repr(e["partition"]): e for e in self._offsets[name]}
            for entry in offsets:
                if entry["offset"] is None:
                    current.pop(repr(entry["partition"]), None)
                else:
                    current[repr(entry["partition"])] = entry
            self._offsets[name] = list(current.values())
            return "The offsets for this connector have been altered successfully"

    def reset_connector_offsets(self, name: str) -> str:
        with self._lock:
            self._require_stopped(name)
            self._offsets[name] = []
            return "The offsets for this connector have been reset successfully"

    def connector_topics(self, name: str) -> list[str]:
        with self._lock:
            self._config(name)
            return sorted(self._topics[name])

    def reset_connector_topics(self, name: str) -> None:
        with self._lock:
            self._config(name)
            self._topics[name] = set()

    def plugins(self, connectors_only: bool = True) -> list[dict[str, Any]]:
        if connectors_only:
            return [p for p in PLUGINS if p["type"] in ("source", "sink")]
        return list(PLUGINS)

    def plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        cls = self._plugin(plugin)
        return [_key("connector.class", True, "The connector plugin.")] + [
            _key(key, True, f"The {key}.") for key in REQUIRED[cls]
        ]

    def validate_config(self, plugin: str, config: dict[str, str]) -> dict[str, Any]:
        cls = self._plugin(plugin)
        errors = self._errors({**config, "connector.class": cls})
        configs = [
            {
                "definition": definition,
                "value": {
                    "name": definition["name"],
                    "value": config.get(definition["name"]),
                    "recommended_values": [],
                    "errors": errors.get(definition["name"], []),
                    "visible": True,
                },
            }
            for definition in self.plugin_config(plugin)
        ]
        count = sum(len(reasons) for reasons in errors.values())
        return {"name": cls, "error_count": count, "groups": ["Common"], "configs": configs}

    # -- internals (lock held) ---------------------------------------------------------------

    def _plugin(self, plugin: str) -> str:
        if plugin not in ALIASES:
            raise NotFoundError(f"Unknown plugin {plugin}")
        return ALIASES[plugin]

    def _errors(self, config: dict[str, str]) -> dict[str, list[str]]:
        cls = ALIASES.get(config.get("connector.class", ""))
        if "connector.class" not in config:
            return {"connector.class": ["Missing required configuration"]}
        if cls is None:
            return {"connector.class": [f"Unknown connector class {config['connector.class']}"]}
        errors = {k: ["Missing required configuration"] for k in REQUIRED[cls] if k not in config}
        tasks_max = config.get("tasks.max", "1")
        if not tasks_max.isdigit() or int(tasks_max) < 1:
            errors["tasks.max"] = ["Value must be at least 1"]
        return errors

    def _store(self, name: str, config: dict[str, str]) -> None:
        errors = self._errors(config)
        if errors:
            raise ConfigError(f"invalid config for {name}", errors)
        self._configs[name] = dict(config)
        self._states.setdefault(name, "RUNNING")
        count = int(config.get("tasks.max", "1"))
        self._tasks[name] = [
            {"id": i, "state": "RUNNING", "worker_id": WORKER} for i in range(count)
        ]
        self._offsets.setdefault(name, [])
        topic = config.get("topic") or config.get("topics", "")
        self._topics[name] = {t for t in topic.split(",") if t}

    def _config(self, name: str) -> dict[str, str]:
        if name not in self._configs:
            raise NotFoundError(f"Connector {name} not found")
        return self._configs[name]

    def _info(self, name: str) -> dict[str, Any]:
        config = self._config(name)
        kind = "source" if ALIASES[config["connector.class"]] == SOURCE else "sink"
        tasks = [{"connector": name, "task": t["id"]} for t in self._tasks[name]]
        return {"name": name, "config": dict(config), "tasks": tasks, "type": kind}

    def _status(self, name: str) -> dict[str, Any]:
        info = self._info(name)
        state = self._states[name]
        tasks = [] if state == "STOPPED" else [dict(t) for t in self._tasks[name]]
        connector = {"state": state, "worker_id": WORKER}
        return {"name": name, "connector": connector, "tasks": tasks, "type": info["type"]}

    def _set_state(self, name: str, state: str) -> None:
        self.calls.append((f"{state.lower()}", name))
        with self._lock:
            self._config(name)
            self._states[name] = state

    def _require_stopped(self, name: str) -> None:
        self._config(name)
        if self._states[name] != "STOPPED":
            raise ConflictError(
                f"Connectors must be in the STOPPED state before their offsets can be modified. "
                f"This can be done for the specified connector by issuing a PUT request to the "
                f"/connectors/{name}/stop endpoint"
            )
