"""The admin calls the mirror connectors make on either cluster, over confluent-kafka.

One ``ClusterAdmin`` per cluster and purpose, each call bounded by ``admin.timeout.ms``.
Errors come back as ``RetriableError`` (the cluster may be back on the next refresh) naming
the cluster alias and the operation; a refused topic creation names the key to change
(``replication.factor`` above the cluster's broker count is the usual one). The AdminClient
is thread-safe, so a connector's scheduler thread and its ``stop`` may share one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import (
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from hub.api import ConnectError, RetriableError

log = logging.getLogger(__name__)

COMPACT = {"cleanup.policy": "compact"}


@dataclass(frozen=True, slots=True)
class TopicConfig:
    """One described topic config entry."""

    name: str
    value: str | None
    is_default: bool
    read_only: bool
    sensitive: bool
    static_broker: bool


@dataclass(frozen=True, slots=True)
class NewMirrorTopic:
    name: str
    partitions: int
    replication_factor: int
    configs: Mapping[str, str]


class ClusterAdmin:
    """Thread-safe; ``alias`` only names the cluster in errors and logs."""

    def __init__(self, alias: str, settings: Mapping[str, str], timeout: float) -> None:
        self.alias = alias
        self.settings = dict(settings)
        self.timeout = timeout
        try:
            self.client = AdminClient(dict(settings))
        except KafkaException as exc:
            raise ConnectError(f"cluster {alias}: invalid admin client setting: {exc}") from None

    def _wait(self, future: Any, what: str) -> Any:
        try:
            return future.result(timeout=self.timeout)
        except KafkaException as exc:
            raise RetriableError(f"cluster {self.alias}: {what} failed: {exc}") from None
        except TimeoutError:
            raise RetriableError(f"cluster {self.alias}: {what} timed out") from None

    # -- topics --------------------------------------------------------------------------------
    def topic_partitions(self) -> dict[str, int]:
        """Every topic's partition count (topics reported with an error left out)."""
        try:
            metadata = self.client.list_topics(timeout=self.timeout)
        except KafkaException as exc:
            raise RetriableError(f"cluster {self.alias}: listing topics failed: {exc}") from None
        return {
            name: len(topic.partitions)
            for name, topic in metadata.topics.items()
            if topic.error is None
        }

    def topic_configs(self, topics: Iterable[str]) -> dict[str, list[TopicConfig]]:
        resources = [ConfigResource(ResourceType.TOPIC, t) for t in topics]
        if not resources:
            return {}
        futures = self.client.describe_configs(resources, request_timeout=self.timeout)
        out: dict[str, list[TopicConfig]] = {}
        for resource, future in futures.items():
            entries = self._wait(future, f"describing configs of {resource.name}")
            out[resource.name] = [
                TopicConfig(
                    e.name,
                    e.value,
                    bool(e.is_default),
                    bool(e.is_read_only),
                    bool(e.is_sensitive),
                    e.source == ConfigSource.STATIC_BROKER_CONFIG.value,
                )
                for e in entries.values()
            ]
        return out

    def create_topics(self, topics: Iterable[NewMirrorTopic]) -> list[str]:
        """Creates the topics; an existing one counts as created. Returns the names created."""
        new = [
            NewTopic(t.name, t.partitions, t.replication_factor, config=dict(t.configs))
            for t in topics
        ]
        if not new:
            return []
        futures = self.client.create_topics(new, operation_timeout=self.timeout)
        created = []
        for name, future in futures.items():
            try:
                future.result(timeout=self.timeout)
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                if isinstance(err, KafkaError) and err.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                    continue
                if isinstance(err, KafkaError) and err.code() in (
                    KafkaError.INVALID_REPLICATION_FACTOR,
                    KafkaError.INVALID_CONFIG,
                    KafkaError.POLICY_VIOLATION,
                ):
                    raise ConnectError(
                        f"cluster {self.alias} refused to create topic {name}: {err.str()} "
                        "(check replication.factor / the *.topic.replication.factor keys)"
                    ) from None
                raise RetriableError(
                    f"cluster {self.alias}: creating topic {name} failed: {exc}"
                ) from None
            created.append(name)
            log.info("created topic", extra={"cluster": self.alias, "topic": name})
        return created

    def create_compacted_topic(self, name: str, replication_factor: int) -> None:
        """MM2's internal topics: one partition, compacted."""
        self.create_topics([NewMirrorTopic(name, 1, replication_factor, COMPACT)])

    def add_partitions(self, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        futures = self.client.create_partitions(
            [NewPartitions(t, n) for t, n in counts.items()], operation_timeout=self.timeout
        )
        for topic, future in futures.items():
            try:
                future.result(timeout=self.timeout)
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                if isinstance(err, KafkaError) and err.code() == KafkaError.INVALID_PARTITIONS:
                    continue  # already that many (a concurrent refresh): MM2 ignores it too
                raise RetriableError(
                    f"cluster {self.alias}: adding partitions to {topic} failed: {exc}"
                ) from None
            log.info("increased partitions", extra={"cluster": self.alias, "topic": topic,
                                                    "partitions": counts[topic]})  # fmt: skip

    def alter_topic_configs(self, changes: Mapping[str, Mapping[str, str | None]]) -> None:
        """Per topic, config name -> value to SET, or None to DELETE (back to the default)."""
        resources = []
        for topic, entries in changes.items():
            ops = [
                ConfigEntry(
                    name,
                    value,
                    incremental_operation=(
                        AlterConfigOpType.DELETE if value is None else AlterConfigOpType.SET
                    ),
                )
                for name, value in entries.items()
            ]
            resources.append(ConfigResource(ResourceType.TOPIC, topic, incremental_configs=ops))
        if not resources:
            return
        futures = self.client.incremental_alter_configs(resources, request_timeout=self.timeout)
        for resource, future in futures.items():
            self._wait(future, f"altering configs of {resource.name}")

    # -- ACLs ----------------------------------------------------------------------------------
    def topic_acls(self) -> list[AclBinding]:
        """Every TOPIC ACL (any pattern type). A cluster without an authorizer answers
        SECURITY_DISABLED, which librdkafka turns into an empty list, as it does with
        CLUSTER_AUTHORIZATION_FAILED (``acl_probe.py`` tells them apart)."""
        make: Any = AclBindingFilter  # its stubs say str where the API takes None (= any)
        selector = make(
            ResourceType.TOPIC, None, ResourcePatternType.ANY, None, None,
            AclOperation.ANY, AclPermissionType.ANY,
        )  # fmt: skip
        future = self.client.describe_acls(selector, request_timeout=self.timeout)
        return list(self._wait(future, "describing topic ACLs"))

    def create_acls(self, bindings: Iterable[AclBinding]) -> list[tuple[AclBinding, KafkaError]]:
        """Creates the ACLs (an existing one is created again, which Kafka treats as a no-op);
        returns the ones the cluster refused with its error (SECURITY_DISABLED: no authorizer)."""
        wanted = list(bindings)
        if not wanted:
            return []
        futures = self.client.create_acls(wanted, request_timeout=self.timeout)
        refused = []
        for binding, future in futures.items():
            try:
                future.result(timeout=self.timeout)
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                if not isinstance(err, KafkaError) or err.retriable():
                    raise RetriableError(
                        f"cluster {self.alias}: creating ACLs failed: {exc}"
                    ) from None
                refused.append((binding, err))
            except TimeoutError:
                raise RetriableError(f"cluster {self.alias}: creating ACLs timed out") from None
        return refused

    # -- consumer groups -----------------------------------------------------------------------
    def groups(self) -> list[str]:
        future = self.client.list_consumer_groups(request_timeout=self.timeout)
        return [g.group_id for g in self._wait(future, "listing consumer groups").valid]

    def group_offsets(self, group: str) -> dict[tuple[str, int], tuple[int, str]]:
        """The group's committed offsets: (topic, partition) -> (offset, metadata)."""
        futures = self.client.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=self.timeout
        )
        result = self._wait(futures[group], f"listing offsets of group {group}")
        return {
            (tp.topic, tp.partition): (tp.offset, tp.metadata or "")
            for tp in result.topic_partitions
            if tp.offset >= 0 and tp.error is None
        }

    def group_states(self, groups: Iterable[str]) -> dict[str, ConsumerGroupState]:
        """Each group's state; a group the cluster does not know is DEAD (Kafka's answer to
        DescribeGroups v6+ is GROUP_ID_NOT_FOUND); a group that could not be described is
        left out."""
        wanted = list(groups)
        if not wanted:
            return {}
        futures = self.client.describe_consumer_groups(wanted, request_timeout=self.timeout)
        out = {}
        for group, future in futures.items():
            try:
                out[group] = future.result(timeout=self.timeout).state
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                if isinstance(err, KafkaError) and err.code() == KafkaError.GROUP_ID_NOT_FOUND:
                    out[group] = ConsumerGroupState.DEAD
                else:
                    extra = {"cluster": self.alias, "group": group, "error": str(exc)}
                    log.warning("could not describe group", extra=extra)
            except TimeoutError:
                log.warning("describing group timed out",
                            extra={"cluster": self.alias, "group": group})  # fmt: skip
        return out

    def commit_group_offsets(self, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """Commits offsets for a group with no active members (the broker refuses otherwise)."""
        partitions = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
        futures = self.client.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, partitions)], request_timeout=self.timeout
        )
        self._wait(futures[group], f"committing offsets of group {group}")
