"""The config keys of Kafka's MirrorMaker 2 connectors, sorted by what Sluice does.

Facts from Kafka's ``MirrorConnectorConfig``, ``MirrorSourceConfig``,
``MirrorCheckpointConfig``, ``MirrorHeartbeatConfig`` and the default filters' configs
(Kafka 3.9/4.x). The three mirror connectors share one list, as in Kafka a key of one (``groups``)
passes through the others (the dedicated driver gives every connector of a flow the same
keys). ``hub.api.upstream`` explains the classes; docs/connectors/mirror.md lists them.
"""

from __future__ import annotations

from hub.api import KAFKA_CONNECT, UpstreamKeys

_DEFAULT_CLASSES = {
    "topic.filter.class": ("org.apache.kafka.connect.mirror.DefaultTopicFilter",),
    "group.filter.class": ("org.apache.kafka.connect.mirror.DefaultGroupFilter",),
    "config.property.filter.class": (
        "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
    ),
    "forwarding.admin.class": ("org.apache.kafka.clients.admin.ForwardingAdmin",),
}

IMPLEMENTED = frozenset({
    "enabled", "source.cluster.alias", "target.cluster.alias", "admin.timeout.ms",
    "replication.policy.class", "replication.policy.separator",
    "replication.policy.internal.topic.separator.enabled", "topics", "topics.exclude",
    "config.properties.exclude", "use.defaults.from", "consumer.poll.timeout.ms",
    "refresh.topics.enabled", "refresh.topics.interval.seconds", "sync.topic.configs.enabled",
    "sync.topic.configs.interval.seconds", "sync.topic.acls.enabled",
    "sync.topic.acls.interval.seconds",
    "replication.factor", "offset-syncs.topic.replication.factor", "offset.lag.max",
    "offset-syncs.topic.location", "emit.offset-syncs.enabled",
    "heartbeats.replication.enabled", "groups", "groups.exclude", "refresh.groups.enabled",
    "refresh.groups.interval.seconds", "emit.checkpoints.enabled",
    "emit.checkpoints.interval.seconds", "sync.group.offsets.enabled",
    "sync.group.offsets.interval.seconds", "checkpoints.topic.replication.factor",
    "emit.heartbeats.enabled", "emit.heartbeats.interval.seconds",
    "heartbeats.topic.replication.factor",
})  # fmt: skip

MIRRORMAKER2 = (
    UpstreamKeys(
        system="MirrorMaker 2",
        known=IMPLEMENTED
        | set(_DEFAULT_CLASSES)
        | {
            "metric.reporters",
            # KIP-629's older names, removed in Kafka 4
            "topics.blacklist",
            "groups.blacklist",
            "config.properties.blacklist",
        },
        implemented=IMPLEMENTED,
        implemented_patterns=(
            # the clusters' client settings (see connectors/mirror/clients.py)
            r"(source|target)\.cluster\.(alias|bootstrap\.servers|security\.protocol|ssl\..+|sasl\..+)",
            r"((source|target)\.)?(consumer|producer|admin)\.(?!override\.).+",
            # what the connectors put in their task configs
            r"task\.assigned\.(partitions|groups)",
            r"task\.index",
        ),
        equivalent=_DEFAULT_CLASSES,
        doc="docs/connectors/mirror.md",
    )
    | KAFKA_CONNECT
)
