"""Configs of the three mirror connectors, with MirrorMaker 2's key names and defaults.

One model per connector (``MirrorSourceConfig``, ``MirrorCheckpointConfig``,
``MirrorHeartbeatConfig``) over a shared base, as Kafka's ``MirrorConnectorConfig``. Defaults
are Kafka's. MirrorMaker 2 keys Sluice does not implement (pluggable filters, forwarding
admins, metric reporters) are rejected by ``ConfigModel.parse`` from the list in
``_mm2_keys.py``; ``mirror_errors`` adds what neither a field nor that list can check: keys under
``source.cluster.``/``target.cluster.`` that are not client settings, top-level security keys
(which, as in Kafka, reach no client), and the byte-array converters the connectors need
(records are copied as raw bytes; a JSON converter would wrap them). Client settings are
derived in ``clients.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator

from connectors.mirror._mm2_keys import MIRRORMAKER2
from connectors.mirror.clients import CLUSTER_KEY, Kind, Side, client_config
from connectors.mirror.filters import (
    CONFIG_PROPERTIES_EXCLUDE_DEFAULT,
    GROUPS_DEFAULT,
    GROUPS_EXCLUDE_DEFAULT,
    TOPICS_DEFAULT,
    TOPICS_EXCLUDE_DEFAULT,
    ConfigPropertyFilter,
    IncludeExcludeFilter,
    compile_pattern_list,
)
from connectors.mirror.policy import DEFAULT_POLICY, POLICY_CLASSES, DefaultReplicationPolicy
from connectors.mirror.policy import make_policy as _make_policy
from hub.api import ConfigModel

BYTE_ARRAY_CONVERTERS = frozenset(
    {"bytes", "ByteArrayConverter", "org.apache.kafka.connect.converters.ByteArrayConverter"}
)
BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"

_TOP_LEVEL_SECURITY = re.compile(r"security\.protocol|ssl\..+|sasl\..+")


def _regexes(value: str) -> str:
    try:
        compile_pattern_list(value)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    return value


def _interval(value: int) -> int:
    if value == 0:
        raise ValueError("must be at least 1 second (or negative to disable)")
    return value


class MirrorConnectorConfig(ConfigModel):
    """Keys every mirror connector shares (Kafka's MirrorConnectorConfig)."""

    upstream_keys = MIRRORMAKER2

    enabled: bool = Field(True, description="Whether to replicate source->target.")
    source_cluster_alias: str = Field(
        alias="source.cluster.alias", min_length=1, description="Alias of the source cluster."
    )
    target_cluster_alias: str = Field(
        "target", alias="target.cluster.alias", min_length=1, description="Alias of the target."
    )
    admin_timeout_ms: int = Field(
        60_000, alias="admin.timeout.ms", gt=0, description="Timeout of admin calls."
    )
    replication_policy_class: str = Field(
        DEFAULT_POLICY,
        alias="replication.policy.class",
        description="DefaultReplicationPolicy (<alias>.<topic>) or IdentityReplicationPolicy.",
    )
    replication_policy_separator: str = Field(
        ".", alias="replication.policy.separator", min_length=1
    )
    internal_topic_separator_enabled: bool = Field(
        True, alias="replication.policy.internal.topic.separator.enabled"
    )

    @field_validator("replication_policy_class")
    @classmethod
    def _known_policy(cls, value: str) -> str:
        if value not in POLICY_CLASSES:
            raise ValueError(
                "only org.apache.kafka.connect.mirror.DefaultReplicationPolicy and "
                "IdentityReplicationPolicy are supported"
            )
        return value

    def policy(self) -> DefaultReplicationPolicy:
        return _make_policy(
            self.replication_policy_class,
            self.replication_policy_separator,
            self.internal_topic_separator_enabled,
            self.source_cluster_alias,
        )

    @property
    def connector_name(self) -> str:
        return str((self.model_extra or {}).get("name", "mirror"))

    @property
    def label(self) -> str:
        """``<source>-><target>|<connector>``: client ids and log lines."""
        return f"{self.source_cluster_alias}->{self.target_cluster_alias}|{self.connector_name}"

    @property
    def admin_timeout(self) -> float:
        return self.admin_timeout_ms / 1000

    def client(self, side: Side, kind: Kind, role: str) -> dict[str, str]:
        return client_config(self.raw(), side, kind, self.label, role)

    def consumer(self, side: Side, role: str) -> dict[str, str]:
        """A consumer that never commits and starts at the earliest offset by default;
        read_uncommitted unless set (the Java client's default, which MM2 inherits)."""
        settings = self.client(side, "consumer", role)
        settings["enable.auto.commit"] = "false"
        settings.setdefault("auto.offset.reset", "earliest")
        settings.setdefault("isolation.level", "read_uncommitted")
        settings.setdefault("group.id", f"{self.label}|{role}")
        return settings


class _TopicFilterKeys(ConfigModel):
    topics: str = Field(TOPICS_DEFAULT, description="Topics (names and regexes) to replicate.")
    topics_exclude: str = Field(TOPICS_EXCLUDE_DEFAULT, alias="topics.exclude")

    _check_regexes = field_validator("topics", "topics_exclude")(_regexes)

    def topic_filter(self) -> IncludeExcludeFilter:
        return IncludeExcludeFilter(self.topics, self.topics_exclude)


class _OffsetSyncKeys(ConfigModel):
    offset_syncs_topic_location: Literal["source", "target"] = Field(
        "source", alias="offset-syncs.topic.location"
    )
    emit_offset_syncs_enabled: bool = Field(True, alias="emit.offset-syncs.enabled")
    consumer_poll_timeout_ms: int = Field(1000, alias="consumer.poll.timeout.ms", gt=0)


class MirrorSourceConfig(MirrorConnectorConfig, _TopicFilterKeys, _OffsetSyncKeys):
    """MirrorSourceConnector (Kafka's MirrorSourceConfig)."""

    config_properties_exclude: str = Field(
        CONFIG_PROPERTIES_EXCLUDE_DEFAULT, alias="config.properties.exclude"
    )
    use_defaults_from: Literal["source", "target"] = Field("target", alias="use.defaults.from")
    refresh_topics_enabled: bool = Field(True, alias="refresh.topics.enabled")
    refresh_topics_interval_seconds: int = Field(600, alias="refresh.topics.interval.seconds")
    sync_topic_configs_enabled: bool = Field(True, alias="sync.topic.configs.enabled")
    sync_topic_configs_interval_seconds: int = Field(
        600, alias="sync.topic.configs.interval.seconds"
    )
    sync_topic_acls_enabled: bool = Field(True, alias="sync.topic.acls.enabled")
    sync_topic_acls_interval_seconds: int = Field(600, alias="sync.topic.acls.interval.seconds")
    replication_factor: int = Field(2, alias="replication.factor")
    offset_syncs_topic_replication_factor: int = Field(
        3, alias="offset-syncs.topic.replication.factor"
    )
    offset_lag_max: int = Field(100, alias="offset.lag.max", ge=0)
    heartbeats_replication_enabled: bool = Field(True, alias="heartbeats.replication.enabled")

    _check_intervals = field_validator(
        "refresh_topics_interval_seconds",
        "sync_topic_configs_interval_seconds",
        "sync_topic_acls_interval_seconds",
    )(_interval)

    _check_property_regexes = field_validator("config_properties_exclude")(_regexes)

    def property_filter(self) -> ConfigPropertyFilter:
        return ConfigPropertyFilter(self.config_properties_exclude, self.use_defaults_from)

    def offset_syncs_topic(self) -> str:
        """``mm2-offset-syncs.<other cluster>.internal`` on the cluster named by the location."""
        other = (
            self.target_cluster_alias
            if self.offset_syncs_topic_location == "source"
            else self.source_cluster_alias
        )
        return self.policy().offset_syncs_topic(other)


class MirrorCheckpointConfig(MirrorConnectorConfig, _TopicFilterKeys, _OffsetSyncKeys):
    """MirrorCheckpointConnector (Kafka's MirrorCheckpointConfig)."""

    groups: str = Field(GROUPS_DEFAULT, description="Consumer groups (names and regexes).")
    groups_exclude: str = Field(GROUPS_EXCLUDE_DEFAULT, alias="groups.exclude")
    refresh_groups_enabled: bool = Field(True, alias="refresh.groups.enabled")
    refresh_groups_interval_seconds: int = Field(600, alias="refresh.groups.interval.seconds")
    emit_checkpoints_enabled: bool = Field(True, alias="emit.checkpoints.enabled")
    emit_checkpoints_interval_seconds: int = Field(60, alias="emit.checkpoints.interval.seconds")
    sync_group_offsets_enabled: bool = Field(False, alias="sync.group.offsets.enabled")
    sync_group_offsets_interval_seconds: int = Field(
        60, alias="sync.group.offsets.interval.seconds"
    )
    checkpoints_topic_replication_factor: int = Field(
        3, alias="checkpoints.topic.replication.factor"
    )

    _check_intervals = field_validator(
        "refresh_groups_interval_seconds",
        "emit_checkpoints_interval_seconds",
        "sync_group_offsets_interval_seconds",
    )(_interval)

    _check_group_regexes = field_validator("groups", "groups_exclude")(_regexes)

    def group_filter(self) -> IncludeExcludeFilter:
        return IncludeExcludeFilter(self.groups, self.groups_exclude)

    def offset_syncs_topic(self) -> str:
        other = (
            self.target_cluster_alias
            if self.offset_syncs_topic_location == "source"
            else self.source_cluster_alias
        )
        return self.policy().offset_syncs_topic(other)

    def checkpoints_topic(self) -> str:
        return self.policy().checkpoints_topic(self.source_cluster_alias)


class MirrorHeartbeatConfig(MirrorConnectorConfig):
    """MirrorHeartbeatConnector (Kafka's MirrorHeartbeatConfig)."""

    emit_heartbeats_enabled: bool = Field(True, alias="emit.heartbeats.enabled")
    emit_heartbeats_interval_seconds: int = Field(1, alias="emit.heartbeats.interval.seconds")
    heartbeats_topic_replication_factor: int = Field(3, alias="heartbeats.topic.replication.factor")

    _check_intervals = field_validator("emit_heartbeats_interval_seconds")(_interval)


def mirror_errors(raw: Mapping[str, Any], converters: tuple[str, ...]) -> dict[str, list[str]]:
    """Problems no single field shows (see the module docstring); ``converters`` names the
    roles (``key``, ``value``, ``header``) that must be byte arrays."""
    errors: dict[str, list[str]] = {}

    def add(key: str, reason: str) -> None:
        errors.setdefault(key, []).append(reason)

    for role in converters:
        key = f"{role}.converter"
        if str(raw.get(key, "")).strip() not in BYTE_ARRAY_CONVERTERS:
            add(
                key,
                f"the mirror connectors copy raw bytes: set {key}={BYTE_ARRAY_CONVERTER} in the "
                "connector config (the worker's default converter cannot be checked here)",
            )
    for key in raw:
        for side in ("source", "target"):
            prefix = f"{side}.cluster."
            rest = key[len(prefix) :]
            if key.startswith(prefix) and rest != "alias" and not CLUSTER_KEY.fullmatch(rest):
                add(
                    key,
                    f"not a cluster setting: {prefix} takes bootstrap.servers, security.protocol, "
                    f"ssl.* and sasl.*; client settings go under {side}.consumer./{side}.producer./"
                    f"{side}.admin.",
                )
        if _TOP_LEVEL_SECURITY.fullmatch(key):
            add(
                key,
                "not used by the mirror connectors' clients (as in Kafka): set "
                f"source.cluster.{key} and/or target.cluster.{key}",
            )
    return errors
