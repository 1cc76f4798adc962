"""MirrorCheckpointConnector: finds the consumer groups to checkpoint and splits them to tasks.

A group is checkpointed when ``groups``/``groups.exclude`` take it and it has committed
offsets for at least one topic the topic filter takes (Kafka's rule). ``start`` creates the
checkpoints topic on the target (one partition, compacted, as Kafka) and loads the groups;
``refresh.groups.interval.seconds`` looks again and asks for a task reconfiguration when the
set changed. Groups are split into contiguous chunks, one per task (Kafka's
``ConnectorUtils.groupPartitions``). No groups, ``enabled=false``: no tasks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from connectors.mirror.admin import ClusterAdmin
from connectors.mirror.checkpoint_task import ASSIGNED_GROUPS, MirrorCheckpointTask
from connectors.mirror.config import MirrorCheckpointConfig, mirror_errors
from connectors.mirror.scheduler import Scheduler
from hub.api import ConnectError, RetriableError, SourceConnector

log = logging.getLogger(__name__)


def chunks(items: list[str], n: int) -> list[list[str]]:
    """``n`` contiguous chunks, the first ``len % n`` one longer (groupPartitions)."""
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return out


class MirrorCheckpointConnector(SourceConnector):
    name = "mirror-checkpoint"
    aliases = (
        "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
        "MirrorCheckpointConnector",
    )
    config_model = MirrorCheckpointConfig
    description = "MirrorMaker 2: translates consumer group offsets into checkpoints on the target."

    def start(self, config: MirrorCheckpointConfig) -> None:
        self.config = config
        self.known: list[str] = []
        self.scheduler: Scheduler | None = None
        self._lock = threading.Lock()
        if not config.enabled:
            return
        self.log_extra = {"connector": config.connector_name}
        self.group_filter = config.group_filter()
        self.topic_filter = config.topic_filter()
        timeout = config.admin_timeout
        self.source = ClusterAdmin(
            config.source_cluster_alias,
            config.client("source", "admin", "checkpoint-source-admin"),
            timeout,
        )
        target = ClusterAdmin(
            config.target_cluster_alias,
            config.client("target", "admin", "checkpoint-target-admin"),
            timeout,
        )
        self.scheduler = Scheduler(config.label)
        try:
            target.create_compacted_topic(
                config.checkpoints_topic(), config.checkpoints_topic_replication_factor
            )
            self._refresh()
            loaded = True
        except RetriableError as exc:
            log.error("mirror checkpoints could not load groups; retrying in the background",
                      extra={**self.log_extra, "error": str(exc)})  # fmt: skip
            loaded = False
        except Exception:
            self.scheduler.stop()
            raise
        interval = config.refresh_groups_interval_seconds if config.refresh_groups_enabled else -1
        self.scheduler.every(
            max(interval, 5) if not loaded else interval, self._refresh_job, "refresh-groups",
            now=not loaded,
        )  # fmt: skip

    def _refresh_job(self) -> None:
        try:
            if self._refresh():
                self.context.request_task_reconfiguration()
        except RetriableError:
            raise
        except ConnectError as exc:
            self.context.raise_error(exc)
            raise

    def _refresh(self) -> bool:
        groups = []
        for group in sorted(g for g in self.source.groups() if self.group_filter(g)):
            topics = {t for t, _ in self.source.group_offsets(group)}
            if any(self.topic_filter(t) for t in topics):
                groups.append(group)
        with self._lock:
            changed = groups != self.known
            self.known = groups
        if changed:
            log.info("checkpointed groups", extra={**self.log_extra, "groups": len(groups)})
        return changed

    @classmethod
    def task_class(cls) -> type[MirrorCheckpointTask]:
        return MirrorCheckpointTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        cfg = self.config
        with self._lock:
            known = list(self.known)
        if not cfg.enabled or not known or not cfg.emit_checkpoints_enabled:
            return []
        raw = cfg.raw()
        return [
            {**raw, ASSIGNED_GROUPS: ",".join(chunk), "task.index": str(i)}
            for i, chunk in enumerate(chunks(known, min(max_tasks, len(known))))
        ]

    def stop(self) -> None:
        if self.scheduler is not None:
            self.scheduler.stop()

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        errors = mirror_errors(raw, ("key", "value"))
        if str(raw.get("enabled", "true")).strip().lower() == "false":
            return errors
        for key, reason in (
            (
                "emit.checkpoints.enabled",
                "MirrorCheckpointConnector can't run with it set to false",
            ),
            (
                "emit.offset-syncs.enabled",
                "MirrorCheckpointConnector can't run without offset syncs",
            ),
        ):
            if str(raw.get(key, "true")).strip().lower() == "false":
                errors.setdefault(key, []).append(reason)
        return errors
