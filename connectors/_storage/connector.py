"""What the S3 and HDFS sink connectors share: task configs and the topic selection check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.api import ExactlyOnceSupport, SinkConnector


class StorageSinkConnector(SinkConnector):
    """Every task gets the same config; the consumer group splits partitions between tasks,
    so each Kafka partition has exactly one writer at a time."""

    config: Any

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        raw = self.config.raw()
        return [{**raw, "task.id": i} for i in range(max(1, max_tasks))]

    @classmethod
    def exactly_once_delivery(cls, config: Mapping[str, Any]) -> ExactlyOnceSupport | None:
        """Objects are named by topic, partition and first offset and only committed once
        written, so a redelivery rewrites the very same names: no duplicate, no gap."""
        return ExactlyOnceSupport.SUPPORTED

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        if not (raw.get("topics") or raw.get("topics.regex")):
            return {"topics": ["Missing required configuration: set 'topics' or 'topics.regex'"]}
        return {}
