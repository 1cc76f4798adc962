"""Connector configs, target states and task configs: Kafka Connect's config topic layout.

Records (JSON values, one partition so all writes are totally ordered)::

    connector-<name>      {"properties": {...}}     null value = connector deleted
    target-state-<name>   {"state": "STARTED" | "PAUSED" | "STOPPED"}
    task-<name>-<i>       {"properties": {...}}
    commit-<name>         {"tasks": n}             task configs 0..n-1 become current
    restart-connector-<name>  {"include-tasks": b, "only-failed": b}   (distributed mode)

Task configs become visible only with their ``commit`` record, so a worker that crashed
half-way through writing a new set of task configs keeps using the previous complete set.
``ConfigStore`` holds the view and applies records; ``MemoryConfigStore`` applies writes
directly (unit tests), ``KafkaConfigStore`` writes to the topic and reads them back through
the reader thread before returning (so a write is durable and visible when the call returns).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from hub.runtime.storage.kafka_log import KafkaBasedLog
from kafka_admin import KafkaAdmin

TARGET_STATES = ("STARTED", "PAUSED", "STOPPED")


class ConfigStore:
    """The in-memory view; subclasses decide how records reach ``_apply``. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._configs: dict[str, dict[str, str]] = {}
        self._targets: dict[str, str] = {}
        self._tasks: dict[str, list[dict[str, Any]]] = {}
        self._pending_tasks: dict[str, dict[int, dict[str, Any]]] = {}
        self.listeners: list[Callable[[str, str, Any], None]] = []
        """Called as ``(kind, connector, value)`` after each applied record, on the thread that
        applied it (the reader thread): ``connector``, ``target-state``, ``commit`` or any other
        record's kind (``restart-connector``...). Distributed workers react to changes here."""

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    @property
    def offset(self) -> int:
        """How far this view has read the config topic (the next offset); 0 in memory."""
        return 0

    def read_to_end(self) -> None:
        """Applies every record written so far (by any worker) to this view."""

    # -- reads -------------------------------------------------------------------------------
    def connectors(self) -> list[str]:
        with self._lock:
            return sorted(self._configs)

    def connector_config(self, name: str) -> dict[str, str] | None:
        with self._lock:
            config = self._configs.get(name)
            return dict(config) if config is not None else None

    def target_state(self, name: str) -> str:
        with self._lock:
            return self._targets.get(name, "STARTED")

    def task_configs(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(c) for c in self._tasks.get(name, [])]

    # -- writes ------------------------------------------------------------------------------
    def put_connector_config(self, name: str, config: dict[str, str]) -> None:
        self._write([(f"connector-{name}", {"properties": config})])

    def remove_connector_config(self, name: str) -> None:
        self._write([(f"connector-{name}", None), (f"target-state-{name}", None)])

    def put_target_state(self, name: str, state: str) -> None:
        assert state in TARGET_STATES, state
        self._write([(f"target-state-{name}", {"state": state})])

    def put_task_configs(self, name: str, configs: list[dict[str, Any]]) -> None:
        records: list[tuple[str, Any]] = [
            (f"task-{name}-{i}", {"properties": c}) for i, c in enumerate(configs)
        ]
        records.append((f"commit-{name}", {"tasks": len(configs)}))
        self._write(records)

    def _write(self, records: list[tuple[str, Any]]) -> None:
        raise NotImplementedError

    # -- applying records --------------------------------------------------------------------
    def _apply(self, key: str, value: Any) -> None:
        self._apply_record(key, value)
        for kind in ("connector", "target-state", "task", "commit", "restart-connector"):
            if key.startswith(kind + "-"):
                name = key[len(kind) + 1 :]
                if kind == "task":
                    name = name.rpartition("-")[0]
                for listener in self.listeners:
                    listener(kind, name, value)
                break

    def put_restart_request(
        self, name: str, include_tasks: bool, only_failed: bool, task: int | None = None
    ) -> None:
        """Kafka Connect's restart request record (KIP-745): every worker restarts what of
        ``name`` it runs (``task``: only that task, a Sluice addition)."""
        value: dict[str, Any] = {"include-tasks": include_tasks, "only-failed": only_failed}
        if task is not None:
            value["task"] = task
        self._write([(f"restart-connector-{name}", value)])

    def _apply_record(self, key: str, value: Any) -> None:
        with self._lock:
            if key.startswith("connector-"):
                name = key[len("connector-") :]
                if value is None:
                    self._configs.pop(name, None)
                    self._tasks.pop(name, None)
                    self._targets.pop(name, None)
                else:
                    self._configs[name] = dict(value["properties"])
            elif key.startswith("target-state-"):
                name = key[len("target-state-") :]
                if value is None:
                    self._targets.pop(name, None)
                else:
                    self._targets[name] = value["state"]
            elif key.startswith("task-"):
                name, _, index = key[len("task-") :].rpartition("-")
                if value is not None:
                    self._pending_tasks.setdefault(name, {})[int(index)] = value["properties"]
            elif key.startswith("commit-"):
                name = key[len("commit-") :]
                pending = self._pending_tasks.pop(name, {})
                count = int(value["tasks"]) if value is not None else 0
                if all(i in pending for i in range(count)):
                    self._tasks[name] = [pending[i] for i in range(count)]


class MemoryConfigStore(ConfigStore):
    def _write(self, records: list[tuple[str, Any]]) -> None:
        for key, value in records:
            self._apply(key, json.loads(json.dumps(value)))


class KafkaConfigStore(ConfigStore):
    """Backed by the compacted config topic (one partition)."""

    def __init__(
        self,
        topic: str,
        client_config: dict[str, Any],
        *,
        replication_factor: int = 1,
        admin: KafkaAdmin | None = None,
    ) -> None:
        super().__init__()
        self.log = KafkaBasedLog(
            topic,
            client_config,
            self._on_record,
            partitions=1,
            replication_factor=replication_factor,
            admin=admin,
        )

    def start(self) -> None:
        self.log.start()

    def stop(self) -> None:
        self.log.stop()

    @property
    def offset(self) -> int:
        return self.log.positions.get(0, 0)

    def read_to_end(self) -> None:
        self.log.read_to_end()

    def _on_record(self, key: bytes | None, value: bytes | None) -> None:
        if key is not None:
            self._apply(key.decode(), json.loads(value) if value is not None else None)

    def _write(self, records: list[tuple[str, Any]]) -> None:
        self.log.send(
            (k.encode(), json.dumps(v).encode() if v is not None else None) for k, v in records
        )
        self.log.read_to_end()
