"""Per-topic log configuration under Kafka's topic-config names.

``TOPIC_CONFIGS`` is the single table of supported configs: Kafka name, type, default, allowed
range and doc. ``LogConfig`` fields are the same names snake_cased, so
``from_topic_configs`` / ``to_topic_configs`` are mechanical and the protocol's
DescribeConfigs handler can list ``TOPIC_CONFIGS`` as-is. Values arrive as strings (that is
how the wire carries them) and every rejection is an ``InvalidConfigError`` naming the key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from broker.errors import InvalidConfigError

INT32_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class ConfigDef:
    """One topic config: how to parse it, its default (as a string) and what it means."""

    name: str
    type: str  # "int" | "long" | "double" | "string" | "list"
    default: str
    doc: str
    validator: Callable[[Any], str | None] | None = None  # returns the reason it is invalid

    @property
    def field(self) -> str:
        return self.name.replace(".", "_")

    def parse(self, raw: str) -> Any:
        """Parses and validates ``raw``; raises InvalidConfigError naming this key."""
        text = str(raw).strip()
        try:
            if self.type in ("int", "long"):
                value: Any = int(text)
                limit = INT32_MAX if self.type == "int" else LONG_MAX
                if not -limit - 1 <= value <= limit:
                    raise ValueError("out of range")
            elif self.type == "double":
                value = float(text)
            elif self.type == "list":
                value = ",".join(part.strip() for part in text.split(",") if part.strip())
            else:
                value = text
        except ValueError:
            raise InvalidConfigError(
                f"invalid value {raw!r} for topic config {self.name!r}: expected {self.type}"
            ) from None
        reason = self.validator(value) if self.validator else None
        if reason:
            raise InvalidConfigError(
                f"invalid value {raw!r} for topic config {self.name!r}: {reason}"
            )
        return value


def _at_least(low: float) -> Callable[[Any], str | None]:
    return lambda v: None if v >= low else f"must be >= {low}"


def _between(low: float, high: float) -> Callable[[Any], str | None]:
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}"


def _one_of(*choices: str) -> Callable[[Any], str | None]:
    return lambda v: None if v in choices else f"must be one of {', '.join(choices)}"


def _cleanup_policy(value: str) -> str | None:
    parts = set(value.split(","))
    if not parts or not parts <= {"delete", "compact"}:
        return "must be 'delete', 'compact' or 'compact,delete'"
    return None


_DEFS = [
    ConfigDef("segment.bytes", "int", str(1 << 30), "Roll a new segment at this size.",
              _between(14, INT32_MAX)),
    ConfigDef("segment.ms", "long", str(7 * 86400_000),
              "Roll after this long between the first and newest batch timestamps.",
              _at_least(1)),
    ConfigDef("segment.index.bytes", "int", str(10 << 20),
              "Roll when a segment's offset index reaches this size.", _at_least(8)),
    ConfigDef("index.interval.bytes", "int", "4096",
              "Add an offset/time index entry after this many bytes of batches.", _at_least(0)),
    ConfigDef("retention.ms", "long", str(7 * 86400_000),
              "Delete closed segments whose newest timestamp is older; -1 keeps forever.",
              _at_least(-1)),
    ConfigDef("retention.bytes", "long", "-1",
              "Delete the oldest closed segments while the partition is larger; -1 = no limit.",
              _at_least(-1)),
    ConfigDef("cleanup.policy", "list", "delete", "delete, compact, or compact,delete.",
              _cleanup_policy),
    ConfigDef("delete.retention.ms", "long", "86400000",
              "How long the cleaner keeps tombstones (null values) after compacting them.",
              _at_least(0)),
    ConfigDef("min.compaction.lag.ms", "long", "0",
              "A record stays uncompacted at least this long.", _at_least(0)),
    ConfigDef("min.cleanable.dirty.ratio", "double", "0.5",
              "Compact when uncleaned bytes exceed this share of the log.", _between(0.0, 1.0)),
    ConfigDef("flush.messages", "long", str(LONG_MAX),
              "fsync after this many records; 1 = fsync before every acknowledgement.",
              _at_least(1)),
    ConfigDef("flush.ms", "long", str(LONG_MAX),
              "fsync data older than this many ms (background thread).", _at_least(0)),
    ConfigDef("max.message.bytes", "int", "1048588", "Largest record batch accepted.",
              _at_least(0)),
    ConfigDef("message.timestamp.type", "string", "CreateTime",
              "CreateTime keeps the producer's timestamps; LogAppendTime stamps the broker's.",
              _one_of("CreateTime", "LogAppendTime")),
    ConfigDef("compression.type", "string", "producer",
              "Accepted for compatibility; batches are always stored as the producer sent them.",
              _one_of("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")),
    ConfigDef("min.insync.replicas", "int", "1",
              "Accepted for compatibility; a single node always has one in-sync replica.",
              _at_least(1)),
]  # fmt: skip

TOPIC_CONFIGS: dict[str, ConfigDef] = {d.name: d for d in _DEFS}


@dataclass(frozen=True)
class LogConfig:
    """Effective configuration of one partition log (defaults = Kafka's)."""

    segment_bytes: int = 1 << 30
    segment_ms: int = 7 * 86400_000
    segment_index_bytes: int = 10 << 20
    index_interval_bytes: int = 4096
    retention_ms: int = 7 * 86400_000
    retention_bytes: int = -1
    cleanup_policy: str = "delete"
    delete_retention_ms: int = 86400_000
    min_compaction_lag_ms: int = 0
    min_cleanable_dirty_ratio: float = 0.5
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    max_message_bytes: int = 1048588
    message_timestamp_type: str = "CreateTime"
    compression_type: str = "producer"
    min_insync_replicas: int = 1

    @classmethod
    def from_topic_configs(
        cls, configs: Mapping[str, str], base: LogConfig | None = None
    ) -> LogConfig:
        """``base`` (or the defaults) with ``configs`` applied; unknown or bad keys raise."""
        changes: dict[str, Any] = {}
        for key, raw in configs.items():
            definition = TOPIC_CONFIGS.get(key)
            if definition is None:
                raise InvalidConfigError(f"unknown topic config {key!r}")
            if raw is None:
                raise InvalidConfigError(f"topic config {key!r} needs a value")
            changes[definition.field] = definition.parse(raw)
        return dataclasses.replace(base or cls(), **changes)

    def to_topic_configs(self) -> dict[str, str]:
        """Every config as Kafka name -> string value (what DescribeConfigs reports)."""
        out = {}
        for name, definition in TOPIC_CONFIGS.items():
            value = getattr(self, definition.field)
            out[name] = repr(value) if isinstance(value, float) else str(value)
        return out

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy.split(",")

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy.split(",")

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"
