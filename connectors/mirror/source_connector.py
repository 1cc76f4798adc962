"""MirrorSourceConnector: finds the topics to mirror, creates them on the target, splits tasks.

``start`` does the first round synchronously (create the offset-syncs topic, list the source
and target topics, create missing remote topics and partitions) so the first task configs
already cover every mirrored partition and every remote topic exists before a record is
produced. If a cluster cannot be reached the connector starts anyway with what it knows and
retries in the background (MirrorMaker 2 does the same); a refused creation (a replication
factor the target cannot honour) fails the connector with the broker's reason.

Background jobs (``Scheduler``, one thread): ``refresh.topics.interval.seconds`` looks for new
topics and partitions on the source (and remote topics missing on the target), creates them
and asks the worker to reconfigure the tasks (``request_task_reconfiguration``) when the set
of partitions changed; ``sync.topic.configs.interval.seconds`` copies topic config changes;
``sync.topic.acls.interval.seconds`` copies the source's topic ACLs (``acl_sync.py``). A source
without an authorizer has no ACLs to copy; a target without one refuses them, which is logged
once at INFO and retried every interval (an authorizer may be configured later).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError

from connectors.mirror.acl_probe import AclAccess, acl_access
from connectors.mirror.acl_sync import mirrored_acls
from connectors.mirror.admin import ClusterAdmin, NewMirrorTopic
from connectors.mirror.config import MirrorSourceConfig, mirror_errors
from connectors.mirror.scheduler import Scheduler
from connectors.mirror.source_task import ASSIGNED_PARTITIONS, MirrorSourceTask, encode_partitions
from connectors.mirror.topic_sync import (
    TopicSelector,
    config_changes,
    creation_configs,
    plan_topics,
    round_robin,
)
from hub.api import ConnectError, RetriableError, SourceConnector

log = logging.getLogger(__name__)


class MirrorSourceConnector(SourceConnector):
    name = "mirror-source"
    aliases = ("org.apache.kafka.connect.mirror.MirrorSourceConnector", "MirrorSourceConnector")
    config_model = MirrorSourceConfig
    description = (
        "MirrorMaker 2: replicates topics (data, partitions, configs) from a source cluster."
    )

    def start(self, config: MirrorSourceConfig) -> None:
        self.config = config
        self.known: list[tuple[str, int]] = []
        self.scheduler: Scheduler | None = None
        self._lock = threading.Lock()
        if not config.enabled:
            return
        self.log_extra = {"connector": config.connector_name}
        self.selector = TopicSelector(
            config.source_cluster_alias,
            config.target_cluster_alias,
            config.policy(),
            config.topic_filter(),
            config.heartbeats_replication_enabled,
        )
        self.props = config.property_filter()
        timeout = config.admin_timeout
        self.source = ClusterAdmin(
            config.source_cluster_alias,
            config.client("source", "admin", "replication-source-admin"),
            timeout,
        )
        self.target = ClusterAdmin(
            config.target_cluster_alias,
            config.client("target", "admin", "replication-target-admin"),
            timeout,
        )
        self.scheduler = Scheduler(config.label)
        try:
            self._create_offset_syncs_topic()
            self._refresh(initial=True)
            loaded = True
        except RetriableError as exc:
            log.error(
                "mirror source could not load topics; retrying in the background",
                extra={**self.log_extra, "error": str(exc)},
            )
            loaded = False
        except Exception:
            self.scheduler.stop()
            raise
        refresh = config.refresh_topics_interval_seconds if config.refresh_topics_enabled else -1
        if not loaded:
            self.scheduler.every(max(refresh, 5), self._refresh_job, "refresh-topics", now=True)
        else:
            self.scheduler.every(refresh, self._refresh_job, "refresh-topics", now=False)
        if config.sync_topic_configs_enabled:
            self.scheduler.every(
                config.sync_topic_configs_interval_seconds,
                self._sync_configs_job,
                "sync-topic-configs",
                now=True,
            )
        if config.sync_topic_acls_enabled:
            self._target_secured = True
            self._source_access: AclAccess = "ok"
            self.scheduler.every(
                config.sync_topic_acls_interval_seconds,
                self._sync_acls_job,
                "sync-topic-acls",
                now=True,
            )
        log.info(
            "mirror source started",
            extra={**self.log_extra, "partitions": len(self.known)},
        )

    def _create_offset_syncs_topic(self) -> None:
        cfg = self.config
        if not cfg.emit_offset_syncs_enabled:
            return
        admin = self.source if cfg.offset_syncs_topic_location == "source" else self.target
        admin.create_compacted_topic(
            cfg.offset_syncs_topic(), cfg.offset_syncs_topic_replication_factor
        )

    # -- jobs ----------------------------------------------------------------------------------
    def _refresh_job(self) -> None:
        try:
            if self._refresh(initial=False):
                self.context.request_task_reconfiguration()
        except RetriableError:
            raise  # logged by the scheduler, retried soon
        except ConnectError as exc:
            self.context.raise_error(exc)
            raise

    def _refresh(self, initial: bool) -> bool:
        """Loads both clusters' topics, creates what is missing; True if the set of mirrored
        source partitions changed."""
        source_topics = self.source.topic_partitions()
        target_topics = self.target.topic_partitions()
        mirrored = {t: n for t, n in source_topics.items() if self.selector.replicates(t)}
        plan = plan_topics(self.selector, mirrored, target_topics)
        if plan.create:
            self._create(plan.create, set(target_topics))
        self.target.add_partitions(plan.grow)
        partitions = self.selector.source_partitions(mirrored)
        with self._lock:
            changed = partitions != self.known
            self.known = partitions
        if changed and not initial:
            log.info(
                "mirrored partitions changed",
                extra={**self.log_extra, "partitions": len(partitions)},
            )
        return changed

    def _create(self, create: Mapping[str, tuple[str, int]], target_names: set[str]) -> None:
        cfg = self.config
        sources = [source for source, _ in create.values()]
        source_configs = self.source.topic_configs(sources)
        known = self._target_config_names(target_names)
        topics = [
            NewMirrorTopic(
                remote,
                partitions,
                cfg.replication_factor,
                creation_configs(source_configs.get(source, []), self.props, known),
            )
            for remote, (source, partitions) in create.items()
        ]
        self.target.create_topics(topics)

    def _target_config_names(self, target_names: set[str]) -> set[str] | None:
        """The topic config names the target cluster knows (from any existing topic)."""
        for name in sorted(target_names):
            described = self.target.topic_configs([name]).get(name)
            if described:
                return {e.name for e in described}
        return None

    def _sync_configs_job(self) -> None:
        with self._lock:
            topics = sorted({t for t, _ in self.known})
        if not topics:
            return
        target_topics = self.target.topic_partitions()
        remotes = {t: self.selector.remote(t) for t in topics}
        present = [t for t in topics if remotes[t] in target_topics]
        if not present:
            return
        source = self.source.topic_configs(present)
        target = self.target.topic_configs([remotes[t] for t in present])
        changes = {}
        for topic in present:
            remote = remotes[topic]
            diff = config_changes(source.get(topic, []), target.get(remote, []), self.props)
            if diff:
                changes[remote] = diff
        if changes:
            self.target.alter_topic_configs(changes)
            log.info("synced topic configs", extra={**self.log_extra, "topics": len(changes)})

    def _sync_acls_job(self) -> None:
        """Kafka's ``syncTopicAcls``: creates the target's copies of the source topic ACLs
        (CreateAcls of an existing ACL is a no-op, so every run sends them all)."""
        source = self.source.topic_acls()
        if not source:
            self._explain_no_source_acls()
            return
        self._source_access = "ok"
        wanted = mirrored_acls(source, self.selector)
        if not wanted:
            log.debug("no topic ACLs to sync", extra=self.log_extra)
            return
        refused = self.target.create_acls(wanted)
        disabled = [b for b, err in refused if err.code() == KafkaError.SECURITY_DISABLED]
        if disabled:
            if self._target_secured:
                log.info(
                    "target cluster has no authorizer; topic ACLs are not synced "
                    "(set sync.topic.acls.enabled=false to stop trying)",
                    extra={**self.log_extra, "acls": len(disabled)},
                )
            self._target_secured = False
            return
        self._target_secured = True
        if refused:
            binding, err = refused[0]
            log.warning(
                "target cluster refused topic ACLs",
                extra={**self.log_extra, "acls": len(refused), "topic": binding.name,
                       "error": err.str()},
            )  # fmt: skip
        synced = len(wanted) - len(refused)
        log.debug("synced topic ACLs", extra={**self.log_extra, "acls": synced})

    def _explain_no_source_acls(self) -> None:
        """An empty ACL list from librdkafka may hide SECURITY_DISABLED or an authorization
        failure: says which, once (Kafka logs a source without an authorizer at INFO)."""
        access = acl_access(self.source.settings, self.config.admin_timeout)
        if access != self._source_access:
            if access == "disabled":
                log.info(
                    "source cluster has no authorizer; no topic ACLs to sync "
                    "(consider sync.topic.acls.enabled=false)",
                    extra=self.log_extra,
                )
            elif access == "denied":
                log.warning(
                    "not allowed to list the source cluster's ACLs (needs DESCRIBE on its "
                    "CLUSTER resource); topic ACLs are not synced",
                    extra=self.log_extra,
                )
        self._source_access = access
        log.debug("no topic ACLs to sync", extra={**self.log_extra, "source": access})

    # -- tasks ---------------------------------------------------------------------------------
    @classmethod
    def task_class(cls) -> type[MirrorSourceTask]:
        return MirrorSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        if not self.config.enabled:
            return []
        with self._lock:
            known = list(self.known)
        raw = self.config.raw()
        return [
            {**raw, ASSIGNED_PARTITIONS: encode_partitions(chunk), "task.index": str(i)}
            for i, chunk in enumerate(round_robin(known, max_tasks))
        ]

    def stop(self) -> None:
        if self.scheduler is not None:
            self.scheduler.stop()

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        return mirror_errors(raw, ("key", "value", "header"))
