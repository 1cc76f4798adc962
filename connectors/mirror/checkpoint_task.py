"""MirrorCheckpointTask: translates its groups' committed offsets and writes checkpoints.

Every ``emit.checkpoints.interval.seconds`` each assigned group's committed offsets are read
on the source; for each partition the topic filter takes, the offset is translated through
the offset syncs (``OffsetSyncStore``: exact at a synced offset, one past the last proven
record otherwise, never beyond) and emitted as a ``wire.Checkpoint`` to
``<source>.checkpoints.internal`` on the target, under the partition's *remote* name (a topic
that came from the target itself gets its original name back). A checkpoint is emitted only if
it moves the downstream offset forward, or follows an upstream rewind (a group reset on the
source), as Kafka does, so checkpoints never lead a failed-over group backwards by accident.

With ``sync.group.offsets.enabled``, every ``sync.group.offsets.interval.seconds`` the latest
checkpoints are also committed as the group's offsets on the target, for groups that are
empty or do not exist there yet, and only where that moves the target's offset forward: a
group consuming on the target is never disturbed (the broker would refuse anyway).

All of it runs on the task's thread (``poll`` waits for whichever is due next); the offset
sync store reads in the background.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import ConsumerGroupState

from connectors.mirror.admin import ClusterAdmin
from connectors.mirror.checkpoint_store import Checkpoints, read_checkpoints
from connectors.mirror.config import MirrorCheckpointConfig
from connectors.mirror.offset_sync_store import OffsetSyncStore
from connectors.mirror.wire import Checkpoint
from hub.api import RetriableError, SourceRecord, SourceTask
from hub.api.schema import BYTES_SCHEMA

log = logging.getLogger(__name__)

ASSIGNED_GROUPS = "task.assigned.groups"
_TARGET_IDLE = (ConsumerGroupState.EMPTY, ConsumerGroupState.DEAD)


class MirrorCheckpointTask(SourceTask):
    def start(self, config: Mapping[str, Any]) -> None:
        cfg = self.config = MirrorCheckpointConfig.parse(config)
        self.groups = [g for g in str(config.get(ASSIGNED_GROUPS, "")).split(",") if g]
        self.source_alias = cfg.source_cluster_alias
        self.target_alias = cfg.target_cluster_alias
        self.policy = cfg.policy()
        self.topic_filter = cfg.topic_filter()
        self.topic = cfg.checkpoints_topic()
        self.log_extra = {"connector": cfg.connector_name, "source": self.source_alias}
        self.interval = cfg.emit_checkpoints_interval_seconds
        self.sync_interval = (
            cfg.sync_group_offsets_interval_seconds if cfg.sync_group_offsets_enabled else -1
        )
        self.source = ClusterAdmin(
            self.source_alias, cfg.client("source", "admin", "checkpoint-source-admin"),
            cfg.admin_timeout,
        )  # fmt: skip
        self.target = ClusterAdmin(
            self.target_alias, cfg.client("target", "admin", "checkpoint-target-admin"),
            cfg.admin_timeout,
        )  # fmt: skip
        self._stopping = threading.Event()
        side = cfg.offset_syncs_topic_location
        self.syncs = OffsetSyncStore(
            cfg.consumer(side, f"offset-syncs-{side}-consumer"),
            cfg.offset_syncs_topic(),
            self.log_extra,
        )
        self.checkpoints: Checkpoints = {}
        self._loaded = threading.Event()
        now = time.monotonic()
        self._next_emit = now + self.interval
        self._next_sync = now + self.sync_interval if self.sync_interval > 0 else float("inf")
        threading.Thread(target=self._load, name=f"checkpoints-{self.topic}", daemon=True).start()
        log.info("checkpointing groups", extra={**self.log_extra, "groups": len(self.groups)})

    def _load(self) -> None:
        """Reads the checkpoints topic, then starts the offset sync store (Kafka's order)."""
        checkpoints, ok = read_checkpoints(
            self.config.consumer("target", "checkpoints-target-consumer"),
            self.topic,
            self.groups,
            self.config.admin_timeout,
            self.log_extra,
        )
        self.checkpoints = checkpoints
        if not self._stopping.is_set():
            self.syncs.start(read_to_end_first=not ok)
        self._loaded.set()

    # -- polling -------------------------------------------------------------------------------
    def poll(self) -> list[SourceRecord] | None:
        due = min(self._next_emit, self._next_sync)
        if self._stopping.wait(max(0.0, min(1.0, due - time.monotonic()))):
            return None
        now = time.monotonic()
        if now >= self._next_sync:
            self._next_sync = now + self.sync_interval
            self._sync_group_offsets()
        if now < self._next_emit:
            return None
        self._next_emit = now + self.interval
        if not self._loaded.is_set():
            return None
        records: list[SourceRecord] = []
        for group in self.groups:
            try:
                records += self._group_checkpoints(group)
            except RetriableError as exc:
                log.warning("checkpoint failed", extra={**self.log_extra, "group": group,
                                                        "error": str(exc)})  # fmt: skip
        return records or None

    def _group_checkpoints(self, group: str) -> list[SourceRecord]:
        stamp = int(time.time() * 1000)
        offsets = self.source.group_offsets(group)
        last = self.checkpoints.setdefault(group, {})
        records = []
        for (topic, partition), (upstream, metadata) in sorted(offsets.items()):
            if not self.topic_filter(topic):
                continue
            downstream = self.syncs.translate(topic, partition, upstream)
            if downstream is None or downstream < 0:
                continue
            remote = self._remote(topic)
            cp = Checkpoint(group, remote, partition, upstream, downstream, metadata)
            previous = last.get((remote, partition))
            if previous is not None and not (
                cp.upstream < previous.upstream or cp.downstream > previous.downstream
            ):
                continue
            last[(remote, partition)] = cp
            records.append(
                SourceRecord(
                    topic=self.topic,
                    partition=0,
                    key=cp.key(),
                    key_schema=BYTES_SCHEMA,
                    value=cp.value(),
                    value_schema=BYTES_SCHEMA,
                    timestamp=stamp,
                    source_partition={"group": group, "topic": remote, "partition": partition},
                    source_offset={"offset": 0},
                )
            )
        return records

    def _remote(self, topic: str) -> str:
        """``orders`` -> ``<source>.orders``; a topic from the target -> its original name."""
        if self.policy.topic_source(topic) == self.target_alias:
            return self.policy.original_topic(topic)
        return self.policy.format_remote_topic(self.source_alias, topic)

    # -- group offset sync ---------------------------------------------------------------------
    def _sync_group_offsets(self) -> None:
        groups = [g for g in self.groups if self.checkpoints.get(g)]
        if not groups:
            return
        try:
            states = self.target.group_states(groups)
        except RetriableError as exc:
            log.warning("group offset sync skipped", extra={**self.log_extra, "error": str(exc)})
            return
        for group in groups:
            state = states.get(group)
            if state not in _TARGET_IDLE:
                continue  # consuming on the target (its own commits win), or unknown
            try:
                self._sync_group(group, state)
            except RetriableError as exc:
                log.warning("group offset sync failed", extra={**self.log_extra, "group": group,
                                                               "error": str(exc)})  # fmt: skip

    def _sync_group(self, group: str, state: ConsumerGroupState | None) -> None:
        current = self.target.group_offsets(group) if state == ConsumerGroupState.EMPTY else {}
        wanted = {
            key: cp.downstream
            for key, cp in self.checkpoints[group].items()
            if key not in current or current[key][0] < cp.downstream
        }
        if wanted:
            self.target.commit_group_offsets(group, wanted)
            extra = {**self.log_extra, "group": group, "partitions": len(wanted)}
            log.info("synced group offsets to target", extra=extra)

    def stop(self) -> None:
        self._stopping.set()
        if hasattr(self, "syncs"):
            self.syncs.stop()
