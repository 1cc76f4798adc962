"""Connector and task states, and the topics each connector used: Kafka Connect's status topic.

Records (JSON)::

    status-connector-<name>            {"state", "trace", "worker_id", "session"}
    status-task-<name>-<id>            same shape
    status-topic-<topic>:connector-<name>
                                       {"topic": {"name", "connector", "task", "discoverTimestamp"}}

Status writes are fire-and-forget (a state change must never block a task thread on the
broker) but are applied to the local view at once, so ``GET .../status`` reflects them
immediately. The reader thread sees this process's own writes later, possibly interleaved
with other workers' (distributed mode) or older ones, so every value carries this process's
``session`` id and each key counts this session's writes not yet read back: while any are in
flight, records read for that key are older than the local view and are skipped; once the last
one is read back, the view follows the topic again (another worker's later write wins, as the
topic orders them). Statuses are
informational: losing the last write in a crash only shows a stale state until the restarted
worker rewrites it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from typing import Any

from confluent_kafka import Producer

from hub.runtime.background import LoopHealth
from hub.runtime.storage.kafka_log import KafkaBasedLog
from kafka_admin import KafkaAdmin

log = logging.getLogger(__name__)

STATES = ("UNASSIGNED", "RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING")


class StatusStore:
    """The in-memory view; thread-safe."""

    def __init__(self) -> None:
        self.session = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._data: dict[str, dict[str, Any]] = {}
        self._in_flight: dict[str, int] = {}  # key -> own writes not yet read back

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
            self._in_flight[key] = self._in_flight.get(key, 0) + 1
            if value is None:
                self._data.pop(key, None)
            else:
                self._data[key] = value
        self._send(key, value)

    def _send(self, key: str, value: dict[str, Any] | None) -> None:
        pass

    def _apply_remote(self, key: str, value: dict[str, Any] | None) -> None:
        with self._lock:
            pending = self._in_flight.get(key, 0)
            session = value.get("session") if value is not None else None
            if session == self.session or (session is None and pending):
                # our own write read back (tombstones and topic records carry no session:
                # while one of ours is in flight, they are taken as ours)
                pending = max(pending - 1, 0)
                if pending:
                    self._in_flight[key] = pending
                else:
                    self._in_flight.pop(key, None)
                return  # the local view already holds it, or a newer own write
            if pending:
                return  # older than the own write still to come back
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
        admin: KafkaAdmin | None = None,
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
        self.health = LoopHealth(f"status writes to {topic}", log, {"topic": topic})
        self._unsent: dict[str, dict[str, Any] | None] = {}
        self._unsent_lock = threading.Lock()
        self._retry_at = 0.0

    def start(self) -> None:
        self.log.start()

    def stop(self) -> None:
        with self._unsent_lock:
            self._retry_at = 0.0
        if self._unsent:
            self._send(*next(iter(self._unsent.items())))  # one last try for what is unsent
        self._producer.flush(10)
        self.log.stop()
        with self._unsent_lock:
            self._producer = None  # type: ignore[assignment]

    def _on_record(self, key: bytes | None, value: bytes | None) -> None:
        if key is not None:
            self._apply_remote(key.decode(), json.loads(value) if value is not None else None)

    def _send(self, key: str, value: dict[str, Any] | None) -> None:
        """Writes one status; never raises into the task or REST thread that changed it.

        A write the producer refuses (its queue full while the broker is away, ...) is kept,
        latest value per key, and written again before the next status change once the
        backoff (``LoopHealth``) has passed; the in-memory view is already up to date."""
        with self._unsent_lock:
            if self._producer is None:
                return  # stopped: late status changes of stopping tasks are not persisted
            self._unsent[key] = value
            if time.monotonic() < self._retry_at:
                return
            try:
                while self._unsent:
                    pending_key, pending = next(iter(self._unsent.items()))
                    data = json.dumps(pending).encode() if pending is not None else None
                    try:
                        self._producer.produce(self.topic, key=pending_key.encode(), value=data)
                    except BufferError:  # the queue is full: give deliveries a moment, once
                        self._producer.poll(0.1)
                        self._producer.produce(self.topic, key=pending_key.encode(), value=data)
                    del self._unsent[pending_key]
                self._producer.poll(0)
            except Exception as exc:  # BufferError, KafkaException: statuses are best effort
                self._retry_at = time.monotonic() + self.health.failed(exc)
            else:
                self.health.succeeded()
