"""MirrorHeartbeatConnector and its one task: a heartbeat into the target every interval.

Kafka's connector: ``start`` creates ``heartbeats`` on the target (one partition, compacted);
one task writes a ``wire.Heartbeat`` (source alias, target alias, now) every
``emit.heartbeats.interval.seconds``. Mirrored onward, a cluster's ``<alias>.heartbeats``
topics show which flows are alive and how far behind they are. ``emit.heartbeats.enabled=false``
means no task. (As in Kafka, ``enabled`` does not stop heartbeats: the dedicated driver relies
on that to emit them for a flow that only runs the other way.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from connectors.mirror.admin import ClusterAdmin
from connectors.mirror.config import MirrorHeartbeatConfig, mirror_errors
from connectors.mirror.wire import Heartbeat
from hub.api import SourceConnector, SourceRecord, SourceTask
from hub.api.schema import BYTES_SCHEMA


class MirrorHeartbeatTask(SourceTask):
    def start(self, config: Mapping[str, Any]) -> None:
        cfg = MirrorHeartbeatConfig.parse(config)
        self.source = cfg.source_cluster_alias
        self.target = cfg.target_cluster_alias
        self.topic = cfg.policy().heartbeats_topic()
        self.interval = cfg.emit_heartbeats_interval_seconds
        self.partition = {"sourceClusterAlias": self.source, "targetClusterAlias": self.target}
        self._stopping = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.wait(self.interval):
            return None
        now = int(time.time() * 1000)
        beat = Heartbeat(self.source, self.target, now)
        return [
            SourceRecord(
                topic=self.topic,
                partition=0,
                key=beat.key(),
                key_schema=BYTES_SCHEMA,
                value=beat.value(),
                value_schema=BYTES_SCHEMA,
                timestamp=now,
                source_partition=self.partition,
                source_offset={"offset": 0},
            )
        ]

    def stop(self) -> None:
        self._stopping.set()


class MirrorHeartbeatConnector(SourceConnector):
    name = "mirror-heartbeat"
    aliases = (
        "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
        "MirrorHeartbeatConnector",
    )
    config_model = MirrorHeartbeatConfig
    description = "MirrorMaker 2: emits heartbeats into the target cluster."

    def start(self, config: MirrorHeartbeatConfig) -> None:
        self.config = config
        target = ClusterAdmin(
            config.target_cluster_alias,
            config.client("target", "admin", "heartbeats-target-admin"),
            config.admin_timeout,
        )
        target.create_compacted_topic(
            config.policy().heartbeats_topic(), config.heartbeats_topic_replication_factor
        )

    @classmethod
    def task_class(cls) -> type[MirrorHeartbeatTask]:
        return MirrorHeartbeatTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        if (
            not self.config.emit_heartbeats_enabled
            or self.config.emit_heartbeats_interval_seconds < 0
        ):
            return []
        return [self.config.raw()]

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        return mirror_errors(raw, ("key", "value"))
