"""Which topics the source connector mirrors, and what it creates and changes on the target.

Pure decisions (the connector does the admin calls), following Kafka's MirrorSourceConnector:

- a source topic is mirrored when the topic filter takes it (or it is a heartbeats topic and
  ``heartbeats.replication.enabled``), it is not internal, and it is not a *cycle*: a topic
  whose source cluster, at any hop, is the target cluster is already there;
- a mirrored topic missing on the target is created with the source's partition count, the
  connector's ``replication.factor`` and the source's replicable configs (below); a remote
  topic with fewer partitions than its source grows (partitions never shrink);
- replicable configs leave out read-only, sensitive and broker-static entries and what
  ``config.properties.exclude`` matches. At creation only values set on the source are copied
  (plus its defaults with ``use.defaults.from=source``); each later sync sets every value that
  differs and, with ``use.defaults.from=target``, removes target overrides of properties that
  are at their default on the source. Only properties the target cluster knows are sent, so a
  Kafka-only property does not fail a sync to Sluice (or the other way round).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from connectors.mirror.admin import TopicConfig
from connectors.mirror.filters import ConfigPropertyFilter
from connectors.mirror.policy import DefaultReplicationPolicy


@dataclass(frozen=True)
class TopicSelector:
    source_alias: str
    target_alias: str
    policy: DefaultReplicationPolicy
    topic_filter: Callable[[str], bool]
    heartbeats_replication: bool

    def replicates(self, topic: str) -> bool:
        wanted = self.topic_filter(topic) or (
            self.heartbeats_replication and self.policy.is_heartbeats_topic(topic)
        )
        return wanted and not self.policy.is_internal_topic(topic) and not self.is_cycle(topic)

    def is_cycle(self, topic: str) -> bool:
        """True if ``topic`` came from the target cluster at some hop."""
        source = self.policy.topic_source(topic)
        if source is None:
            return False
        if source == self.target_alias:
            return True
        upstream = self.policy.upstream_topic(topic)
        if upstream is None or upstream == topic:
            return False  # IdentityReplicationPolicy and the like cannot tell
        return self.is_cycle(upstream)

    def remote(self, topic: str) -> str:
        return self.policy.format_remote_topic(self.source_alias, topic)

    def source_partitions(self, source_topics: Mapping[str, int]) -> list[tuple[str, int]]:
        """Every (topic, partition) to mirror, in a stable order."""
        return [
            (topic, p)
            for topic in sorted(source_topics)
            if self.replicates(topic)
            for p in range(source_topics[topic])
        ]


@dataclass(frozen=True)
class TopicPlan:
    create: dict[str, tuple[str, int]]  # remote topic -> (source topic, partitions)
    grow: dict[str, int]  # remote topic -> new partition count


def plan_topics(
    selector: TopicSelector, mirrored: Mapping[str, int], target_topics: Mapping[str, int]
) -> TopicPlan:
    """What to create or grow on the target for the ``mirrored`` source topics (name ->
    partitions)."""
    create: dict[str, tuple[str, int]] = {}
    grow: dict[str, int] = {}
    for topic, partitions in mirrored.items():
        remote = selector.remote(topic)
        existing = target_topics.get(remote)
        if existing is None:
            create[remote] = (topic, partitions)
        elif existing < partitions:
            grow[remote] = partitions
    return TopicPlan(create, grow)


def _replicable(entries: Iterable[TopicConfig], props: ConfigPropertyFilter) -> list[TopicConfig]:
    return [
        e
        for e in entries
        if not e.read_only
        and not e.sensitive
        and not e.static_broker
        and e.value is not None
        and props.should_replicate(e.name)
    ]


def creation_configs(
    source: Iterable[TopicConfig], props: ConfigPropertyFilter, known: set[str] | None = None
) -> dict[str, str]:
    """Configs of a new remote topic (``known``: the names the target accepts, if known)."""
    return {
        e.name: str(e.value)
        for e in _replicable(source, props)
        if (not e.is_default or props.should_replicate_source_default(e.name))
        and (known is None or e.name in known)
    }


def config_changes(
    source: Iterable[TopicConfig], target: Iterable[TopicConfig], props: ConfigPropertyFilter
) -> dict[str, str | None]:
    """Name -> value to set, or None to remove the target's override; only real changes."""
    current = {e.name: e for e in target}
    changes: dict[str, str | None] = {}
    for entry in _replicable(source, props):
        have = current.get(entry.name)
        if have is None or have.read_only:
            continue  # a property the target does not know (or cannot change)
        if entry.is_default and not props.should_replicate_source_default(entry.name):
            if not have.is_default and not have.static_broker:
                changes[entry.name] = None
        elif have.value != entry.value:
            changes[entry.name] = entry.value
    return changes


def round_robin(partitions: list[tuple[str, int]], max_tasks: int) -> list[list[tuple[str, int]]]:
    """MM2's task split: partition i goes to task i mod n (n = min(max_tasks, partitions))."""
    n = min(max_tasks, len(partitions))
    if n <= 0:
        return []
    tasks: list[list[tuple[str, int]]] = [[] for _ in range(n)]
    for i, tp in enumerate(partitions):
        tasks[i % n].append(tp)
    return tasks
