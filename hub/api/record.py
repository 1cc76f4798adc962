"""Records as connectors, transforms and converters see them.

A record is immutable; a transform returns a new one with ``record.replace(...)``. Keys, values
and header values are plain Python data with an optional ``Schema`` (see ``hub.api.schema``);
converters turn them into bytes for the broker and back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Self

from hub.api.schema import Schema


@dataclass(frozen=True, slots=True)
class Header:
    key: str
    value: Any
    schema: Schema | None = None


class TimestampType(IntEnum):
    NO_TIMESTAMP = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


@dataclass(frozen=True, slots=True)
class TopicPartition:
    topic: str
    partition: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectRecord:
    """What every record has. ``partition`` None lets the producer's partitioner choose."""

    topic: str
    partition: int | None = None
    key: Any = None
    value: Any = None
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    timestamp: int | None = None  # epoch milliseconds
    headers: tuple[Header, ...] = field(default_factory=tuple)

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed (records are immutable)."""
        return dataclasses.replace(self, **changes)

    def header(self, key: str) -> Header | None:
        """The last header with this key (Kafka allows repeats; the last one wins)."""
        for h in reversed(self.headers):
            if h.key == key:
                return h
        return None

    def with_header(self, key: str, value: Any, schema: Schema | None = None) -> Self:
        return self.replace(headers=(*self.headers, Header(key, value, schema)))


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceRecord(ConnectRecord):
    """A record a source task produced, with the position in the source system it came from.

    ``source_partition`` names a stream in the source (a file, a table, a replication slot);
    ``source_offset`` is the position within it after this record. The worker stores the
    offset of the last record the broker acknowledged, per source partition, and gives it back
    through ``SourceTaskContext.offsets`` after a restart. Both must be JSON-serialisable.
    """

    source_partition: Mapping[str, Any] = field(default_factory=dict)
    source_offset: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class SinkRecord(ConnectRecord):
    """A record read from a topic for a sink task; ``offset`` is its Kafka offset."""

    offset: int = -1
    timestamp_type: TimestampType = TimestampType.CREATE_TIME

    @property
    def topic_partition(self) -> TopicPartition:
        assert self.partition is not None
        return TopicPartition(self.topic, self.partition)
