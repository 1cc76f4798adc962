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
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from hub.runtime.storage.kafka_log import KafkaBasedLog
from hub.runtime.topic_admin import TopicAdmin

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
        admin: TopicAdmin | None = None,
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

    def _on_record(self, key: bytes | None, value: bytes | None) -> None:
        if key is not None:
            self._apply(key.decode(), value.decode() if value is not None else None)

    def _write(self, records: list[tuple[str, str | None]]) -> None:
        self.log.send((k.encode(), v.encode() if v is not None else None) for k, v in records)
        self.log.read_to_end()
