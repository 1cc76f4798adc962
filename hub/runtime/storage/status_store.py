"""Connector and task states, and the topics each connector used: Kafka Connect's status topic.

Records (JSON)::

    status-connector-<name>            {"state", "trace", "worker_id", "session"}
    status-task-<name>-<id>            same shape
    status-topic-<topic>:connector-<name>
                                       {"topic": {"name", "connector", "task", "discoverTimestamp"}}

Status writes are fire-and-forget (a state change must never block a task thread on the
broker) but are applied to the local view at once, so ``GET .../status`` reflects them
immediately. Because the reader thread sees this process's own writes later, possibly
interleaved with older ones, every value carries this process's ``session`` id and the reader
ignores its own session's records (and any record of a key this session wrote); records of
earlier sessions (a previous run of the worker) are what the reader is for. Statuses are
informational: losing the last write in a crash only shows a stale state until the restarted
worker rewrites it.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

from confluent_kafka import Producer

from hub.runtime.storage.kafka_log import KafkaBasedLog
from hub.runtime.topic_admin import TopicAdmin

STATES = ("UNASSIGNED", "RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING")


class StatusStore:
    """The in-memory view; thread-safe."""

    def __init__(self) -> None:
        self.session = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._data: dict[str, dict[str, Any]] = {}
        self._owned: set[str] = set()  # keys this session wrote: their topic records are stale

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def put_connector(
        self, name: str, state: str, worker_id: str, trace: str | None = None
    ) -> None:
        self._put(f"status-connector-{name}", _status(state, worker_id, trace, self.session))

    def put_task(
        self, name: str, task: int, state: str, worker_id: str, trace: str | None = None
    ) -> None:
        self._put(f"status-task-{name}-{task}", _status(state, worker_id, trace, self.session))

    def put_topic(self, name: str, topic: str, task: int) -> None:
        """Records that ``name`` used ``topic`` (idempotent; written once per topic)."""
        key = f"status-topic-{topic}:connector-{name}"
        with self._lock:
            if key in self._data:
                return
        value = {
            "topic": {
                "name": topic,
                "connector": name,
                "task": task,
                "discoverTimestamp": int(time.time() * 1000),
            },
            "session": self.session,
        }
        self._put(key, value)

    def connector(self, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._data.get(f"status-connector-{name}")

    def task(self, name: str, task: int) -> dict[str, Any] | None:
        with self._lock:
            return self._data.get(f"status-task-{name}-{task}")

    def tasks(self, name: str) -> dict[int, dict[str, Any]]:
        prefix = f"status-task-{name}-"
        with self._lock:
            out = {}
            for key, value in self._data.items():
                index = key[len(prefix) :]
                if key.startswith(prefix) and index.isdigit():
                    out[int(index)] = value
            return dict(sorted(out.items()))

    def topics(self, name: str) -> list[str]:
        suffix = f":connector-{name}"
        with self._lock:
            return sorted(
                v["topic"]["name"]
                for k, v in self._data.items()
                if k.startswith("status-topic-") and k.endswith(suffix)
            )

    def remove_topics(self, name: str) -> None:
        suffix = f":connector-{name}"
        with self._lock:
            keys = [k for k in self._data if k.startswith("status-topic-") and k.endswith(suffix)]
        for key in keys:
            self._put(key, None)

    def remove_connector(self, name: str, tasks: int | None = None) -> None:
        """Tombstones the connector's and its tasks' statuses."""
        self._put(f"status-connector-{name}", None)
        for index in tasks_range(self.tasks(name), tasks):
            self._put(f"status-task-{name}-{index}", None)

    def remove_task(self, name: str, task: int) -> None:
        self._put(f"status-task-{name}-{task}", None)

    def _put(self, key: str, value: dict[str, Any] | None) -> None:
        with self._lock:
            self._owned.add(key)
            if value is None:
                self._data.pop(key, None)
            else:
                self._data[key] = value
        self._send(key, value)

    def _send(self, key: str, value: dict[str, Any] | None) -> None:
        pass

    def _apply_remote(self, key: str, value: dict[str, Any] | None) -> None:
        with self._lock:
            if key in self._owned or (value is not None and value.get("session") == self.session):
                return
            if value is None:
                self._data.pop(key, None)
            else:
                self._data[key] = value


def tasks_range(existing: dict[int, Any], count: int | None) -> list[int]:
    return sorted(set(existing) | set(range(count or 0)))


def _status(state: str, worker_id: str, trace: str | None, session: str) -> dict[str, Any]:
    assert state in STATES, state
    value: dict[str, Any] = {"state": state, "worker_id": worker_id, "session": session}
    if trace:
        value["trace"] = trace
    return value


class MemoryStatusStore(StatusStore):
    pass


class KafkaStatusStore(StatusStore):
    """Backed by the compacted status topic; writes are asynchronous."""

    def __init__(
        self,
        topic: str,
        client_config: dict[str, Any],
        *,
        partitions: int = 1,
        replication_factor: int = 1,
        admin: TopicAdmin | None = None,
    ) -> None:
        super().__init__()
        self.topic = topic
        self.log = KafkaBasedLog(
            topic,
            client_config,
            self._on_record,
            partitions=partitions,
            replication_factor=replication_factor,
            admin=admin,
        )
        self._producer = Producer(
            {**client_config, "enable.idempotence": True, "acks": "all", "linger.ms": 5}
        )

    def start(self) -> None:
        self.log.start()

    def stop(self) -> None:
        self._producer.flush(10)
        self.log.stop()
        self._producer = None  # type: ignore[assignment]

    def _on_record(self, key: bytes | None, value: bytes | None) -> None:
        if key is not None:
            self._apply_remote(key.decode(), json.loads(value) if value is not None else None)

    def _send(self, key: str, value: dict[str, Any] | None) -> None:
        if self._producer is None:
            return  # stopped: late status changes of stopping tasks are not persisted
        data = json.dumps(value).encode() if value is not None else None
        self._producer.produce(self.topic, key=key.encode(), value=data)
        self._producer.poll(0)
