"""Source offsets per connector and source partition: Kafka Connect's offsets topic layout.

Key: the JSON array ``["<connector>", {source partition}]``; value: the JSON source offset, or
null (a tombstone) once the offset was reset. Keys are serialised with sorted object keys so
the same partition always maps to the same key (and so to the same topic partition, which
keeps one source partition's offsets in order). ``put`` returns only after the broker
acknowledged the write and the reader applied it, so an offset reported as committed survives
a crash of the worker right after.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from hub.runtime.storage.kafka_log import KafkaBasedLog
from kafka_admin import KafkaAdmin

log = logging.getLogger(__name__)

PartitionKey = tuple[tuple[str, Any], ...]


def partition_key(partition: Mapping[str, Any]) -> PartitionKey:
    """The hashable form of a source partition used by ``OffsetReader.offsets``."""
    return tuple(sorted((k, _freeze(v)) for k, v in partition.items()))


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return partition_key(value)
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def encode_key(connector: str, partition: Mapping[str, Any]) -> str:
    return json.dumps([connector, partition], sort_keys=True, separators=(",", ":"))


class OffsetStore:
    """The in-memory view: connector -> encoded key -> (partition, offset). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[str, dict[str, tuple[dict[str, Any], dict[str, Any]]]] = {}

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def sync(self) -> None:
        """Applies every offset committed so far (by any writer) to the view."""

    def get(self, connector: str, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        with self._lock:
            entry = self._data.get(connector, {}).get(encode_key(connector, partition))
            return dict(entry[1]) if entry is not None else None

    def connector_offsets(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every (partition, offset) of ``connector``, in a stable order."""
        with self._lock:
            entries = self._data.get(connector, {})
            return [(dict(p), dict(o)) for _, (p, o) in sorted(entries.items())]

    def put(
        self,
        connector: str,
        offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> None:
        """Stores offsets (None removes a partition's offset); durable when it returns."""
        records = [
            (encode_key(connector, p), json.dumps(o) if o is not None else None) for p, o in offsets
        ]
        if records:
            self._write(records)

    def _write(self, records: list[tuple[str, str | None]]) -> None:
        raise NotImplementedError

    def _apply(self, key: str, value: str | None) -> None:
        connector, partition = json.loads(key)
        with self._lock:
            entries = self._data.setdefault(connector, {})
            if value is None:
                entries.pop(key, None)
            else:
                entries[key] = (partition, json.loads(value))


class MemoryOffsetStore(OffsetStore):
    def _write(self, records: list[tuple[str, str | None]]) -> None:
        for key, value in records:
            self._apply(key, value)


class KafkaOffsetStore(OffsetStore):
    """Backed by the compacted offsets topic."""

    def __init__(
        self,
        topic: str,
        client_config: dict[str, Any],
        *,
        partitions: int = 5,
        replication_factor: int = 1,
        admin: KafkaAdmin | None = None,
    ) -> None:
        super().__init__()
        self.log = KafkaBasedLog(
            topic,
            client_config,
            self._on_record,
            partitions=partitions,
            replication_factor=replication_factor,
            admin=admin,
        )

    def start(self) -> None:
        self.log.start()

    def stop(self) -> None:
        self.log.stop()

    def sync(self) -> None:
        self.log.read_to_end()

    def _on_record(self, key: bytes | None, value: bytes | None) -> None:
        if key is not None:
            self._apply(key.decode(), value.decode() if value is not None else None)

    def _write(self, records: list[tuple[str, str | None]]) -> None:
        self.log.send((k.encode(), v.encode() if v is not None else None) for k, v in records)
        self.log.read_to_end()


class ConnectorOffsetStore:
    """One connector's offsets in its own topic (``offsets.storage.topic``, KIP-618) over the
    worker's global store: reads prefer the connector's topic and fall back to the global one
    for partitions it lacks; writes go to the connector's topic. The same interface as
    ``OffsetStore`` for what tasks and the REST offsets API use."""

    def __init__(self, own: OffsetStore, fallback: OffsetStore, topic: str) -> None:
        self.own = own
        self.fallback = fallback
        self.topic = topic

    def get(self, connector: str, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        found = self.own.get(connector, partition)
        return found if found is not None else self.fallback.get(connector, partition)

    def connector_offsets(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        merged = {encode_key(connector, p): (p, o) for p, o in self.fallback.connector_offsets(
            connector)}  # fmt: skip
        merged.update(
            {encode_key(connector, p): (p, o) for p, o in self.own.connector_offsets(connector)}
        )
        return [merged[k] for k in sorted(merged)]

    def put(
        self,
        connector: str,
        offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> None:
        """Writes to the connector's topic; a reset (None) also clears the global topic's
        entry, so the fallback cannot bring the old offset back."""
        items = list(offsets)
        self.own.put(connector, items)
        stale = [(p, None) for p, o in items if o is None and self.fallback.get(connector, p)]
        if stale:
            self.fallback.put(connector, stale)

    def sync(self) -> None:
        self.own.sync()
        self.fallback.sync()


class ConnectorOffsetStores:
    """The worker's per-connector offsets topics (``offsets.storage.topic``): one
    ``KafkaOffsetStore`` per topic, started on first use and shared by the connector's tasks
    and the REST offsets API, each read over the global store. Thread-safe."""

    def __init__(self, worker: Any, global_store: OffsetStore, admin: KafkaAdmin) -> None:
        self._worker = worker
        self._global = global_store
        self._admin = admin
        self._lock = threading.Lock()
        self._stores: dict[str, ConnectorOffsetStore] = {}

    def store_for(self, connector_config: Mapping[str, Any]) -> Any:
        topic = str(connector_config.get("offsets.storage.topic", "")).strip()
        if not topic or topic == self._worker.offset_storage_topic:
            return self._global
        with self._lock:
            store = self._stores.get(topic)
            if store is None:
                own = KafkaOffsetStore(
                    topic, self._worker.client_config("admin"),
                    partitions=self._worker.offset_storage_partitions,
                    replication_factor=self._worker.internal_topic_replication_factor,
                    admin=self._admin,
                )  # fmt: skip
                own.start()
                store = self._stores[topic] = ConnectorOffsetStore(own, self._global, topic)
            return store

    def stop(self) -> None:
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            try:
                store.own.stop()
            except Exception:
                log.exception("offsets store did not stop cleanly", extra={"topic": store.topic})
