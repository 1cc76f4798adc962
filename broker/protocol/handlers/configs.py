"""DescribeConfigs (32), AlterConfigs (33), IncrementalAlterConfigs (44).

Topic configs are the storage's ``TOPIC_CONFIGS`` table; each value is reported with where it
comes from, as Kafka does: a topic override (DYNAMIC_TOPIC_CONFIG), a broker-wide default given
at start-up (STATIC_BROKER_CONFIG, under the broker property name such as
``log.retention.ms``), or the built-in default (DEFAULT_CONFIG). Admin tools use the source to
show which values were set on purpose, and ``include_synonyms`` lists the whole chain.

Broker resources can be described (static, read-only here); altering them is refused, since
this broker reads its settings once at start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import (
    BrokerError,
    ClusterAuthorizationFailedError,
    InvalidConfigError,
    TopicAuthorizationFailedError,
)
from broker.log.config import TOPIC_CONFIGS, LogConfig
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.acl import CLUSTER_NAME, AclOperation, ResourceType
from broker.security.authorizer import allowed

TOPIC, BROKER = 2, 4
DYNAMIC_TOPIC, STATIC_BROKER, DEFAULT = 1, 4, 5
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
_TYPES = {"boolean": 1, "string": 2, "int": 3, "long": 5, "double": 6, "list": 7}

# Kafka's broker-level property behind each topic config (its "synonym").
BROKER_SYNONYMS = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "retention.ms": "log.retention.ms",
    "retention.bytes": "log.retention.bytes",
    "cleanup.policy": "log.cleanup.policy",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "max.message.bytes": "message.max.bytes",
    "message.timestamp.type": "log.message.timestamp.type",
    "compression.type": "compression.type",
    "min.insync.replicas": "min.insync.replicas",
}


@dataclass
class ConfigEntry:
    """One described config, independent of the response version."""

    name: str
    value: str | None
    source: int
    type: int = 2
    doc: str | None = None
    read_only: bool = False
    synonyms: list[tuple[str, str | None, int]] = field(default_factory=list)


def topic_config_entries(
    broker: Any, topic: str, overrides: dict[str, str] | None = None
) -> list[ConfigEntry]:
    """Every topic config's effective value and source (``overrides`` default: the topic's)."""
    if overrides is None:
        overrides = dict(broker.logs.topic(topic).configs)
    static = dict(broker.config.log_defaults)
    entries = []
    for name, definition in TOPIC_CONFIGS.items():
        chain: list[tuple[str, str | None, int]] = []
        if name in overrides:
            chain.append((name, overrides[name], DYNAMIC_TOPIC))
        if name in static:
            chain.append((BROKER_SYNONYMS.get(name, name), static[name], STATIC_BROKER))
        chain.append((BROKER_SYNONYMS.get(name, name), definition.default, DEFAULT))
        _, value, source = chain[0]
        entries.append(
            ConfigEntry(name, value, source, _TYPES.get(definition.type, 0), definition.doc,
                        synonyms=chain)
        )  # fmt: skip
    return entries


def broker_config_entries(broker: Any) -> list[ConfigEntry]:
    """The broker's own settings under Kafka's property names (read-only: fixed at start)."""
    cfg = broker.config
    plain: list[tuple[str, str, int]] = [
        ("broker.id", str(cfg.node_id), 3),
        ("node.id", str(cfg.node_id), 3),
        ("listeners", ",".join(item.url() for item in cfg.effective_listeners()), 2),
        (
            "advertised.listeners",
            ",".join(item.url(advertised=True) for item in cfg.effective_listeners()),
            2,
        ),
        ("log.dirs", str(cfg.data_dir), 2),
        ("auto.create.topics.enable", str(cfg.auto_create_topics).lower(), 1),
        ("num.partitions", str(cfg.num_partitions), 3),
        ("default.replication.factor", "1", 3),
        ("offsets.topic.replication.factor", "1", 4),
        ("socket.request.max.bytes", str(cfg.max_request_size), 3),
        ("queued.max.request.bytes", str(cfg.queued_request_bytes_limit), 5),
        ("connections.max.idle.ms", str(cfg.connections_max_idle_ms), 5),
        ("max.connections", str(cfg.max_connections), 3),
        ("max.connections.per.ip", str(cfg.max_connections_per_ip), 3),
        ("max.connections.per.ip.overrides", _overrides(cfg.max_connections_per_ip_overrides), 2),
        ("log.cleaner.backoff.ms", str(cfg.log_cleaner_backoff_ms), 5),
    ]
    entries = [ConfigEntry(n, v, STATIC_BROKER, t, read_only=True) for n, v, t in plain]
    static = dict(cfg.log_defaults)
    for name, definition in TOPIC_CONFIGS.items():
        synonym = BROKER_SYNONYMS.get(name, name)
        value, source = (static[name], STATIC_BROKER) if name in static else (
            definition.default, DEFAULT)  # fmt: skip
        entries.append(ConfigEntry(synonym, value, source, _TYPES.get(definition.type, 0),
                                   definition.doc, read_only=True))  # fmt: skip
    return entries


def _overrides(overrides: Any) -> str:
    return ",".join(f"{host}:{count}" for host, count in overrides.items())


@handles(32, 0, 4)
async def describe_configs(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    result_cls = nested(cls, "DescribeConfigsResult")
    entry_cls = nested(cls, "DescribeConfigsResourceResult")
    synonym_cls = nested(cls, "DescribeConfigsSynonym")
    docs = getattr(request, "include_documentation", False)
    results = []
    for res in request.resources:
        entries: list[ConfigEntry] = []
        try:
            _authorize(ctx, AclOperation.DESCRIBE_CONFIGS, res.resource_type, res.resource_name)
            entries = _describe(ctx, res.resource_type, res.resource_name)
            code, message = ErrorCode.none, None
        except BrokerError as exc:
            code, message = exc.error_code, str(exc)
        keys = set(res.configuration_keys) if res.configuration_keys else None
        configs = tuple(
            build(
                entry_cls,
                name=e.name,
                value=e.value,
                read_only=e.read_only,
                config_source=e.source,
                is_default=e.source == DEFAULT,
                is_sensitive=False,
                synonyms=tuple(
                    build(synonym_cls, name=n, value=v, source=s) for n, v, s in e.synonyms
                )
                if getattr(request, "include_synonyms", False)  # v1+
                else (),
                config_type=e.type,
                documentation=e.doc if docs else None,
            )
            for e in entries
            if keys is None or e.name in keys
        )
        results.append(
            build(
                result_cls,
                error_code=code,
                error_message=message,
                resource_type=res.resource_type,
                resource_name=res.resource_name,
                configs=configs,
            )
        )
    return build(cls, throttle_time=NO_THROTTLE, results=tuple(results))


def _describe(ctx: RequestContext, resource_type: int, name: str) -> list[ConfigEntry]:
    if resource_type == TOPIC:
        if ctx.broker.logs is None:
            raise InvalidConfigError("storage unavailable")
        return topic_config_entries(ctx.broker, name)
    if resource_type == BROKER:
        _check_broker_name(ctx, name)
        return broker_config_entries(ctx.broker)
    raise InvalidConfigError(f"unsupported config resource type {resource_type}")


def _authorize(ctx: RequestContext, operation: AclOperation, resource_type: int, name: str) -> None:
    """Kafka's rule: a topic's configs need the operation on the topic, a broker's (and the
    cluster's) on the cluster; refusals are per resource."""
    if ctx.broker.authorizer is None:
        return
    if resource_type == TOPIC:
        if not allowed(ctx, operation, ResourceType.TOPIC, name):
            raise TopicAuthorizationFailedError(f"not authorized for topic {name}")
    elif not allowed(ctx, operation, ResourceType.CLUSTER, CLUSTER_NAME):
        raise ClusterAuthorizationFailedError("not authorized for the cluster's configs")


def _check_broker_name(ctx: RequestContext, name: str) -> None:
    if name not in ("", str(ctx.broker.config.node_id)):
        raise InvalidConfigError(f"unknown broker {name!r}")


@handles(33, 0, 2)
async def alter_configs(ctx: RequestContext, request: Any) -> Any:
    """Legacy AlterConfigs: the given set *replaces* all of the topic's overrides."""

    def changes(res: Any, current: dict[str, str]) -> dict[str, str]:
        return {c.name: c.value for c in res.configs}

    return await _alter(ctx, request, changes, "AlterConfigsResourceResponse")


@handles(44, 0, 1)
async def incremental_alter_configs(ctx: RequestContext, request: Any) -> Any:
    """Set/delete/append/subtract individual keys, keeping the other overrides."""

    def changes(res: Any, current: dict[str, str]) -> dict[str, str]:
        out = dict(current)
        for c in res.configs:
            if c.name not in TOPIC_CONFIGS:
                raise InvalidConfigError(f"unknown topic config {c.name!r}")
            if c.config_operation == SET:
                out[c.name] = c.value
            elif c.config_operation == DELETE:
                out.pop(c.name, None)
            elif c.config_operation in (APPEND, SUBTRACT):
                if TOPIC_CONFIGS[c.name].type != "list":
                    raise InvalidConfigError(f"{c.name} is not a list config")
                base = out.get(c.name, TOPIC_CONFIGS[c.name].default)
                items = [x for x in base.split(",") if x]
                for x in (c.value or "").split(","):
                    if c.config_operation == APPEND and x and x not in items:
                        items.append(x)
                    elif c.config_operation == SUBTRACT and x in items:
                        items.remove(x)
                out[c.name] = ",".join(items)
            else:
                raise InvalidConfigError(f"unknown config operation {c.config_operation}")
        return out

    return await _alter(ctx, request, changes, "AlterConfigsResourceResponse")


async def _alter(ctx: RequestContext, request: Any, changes: Any, result_name: str) -> Any:
    cls = response_class(ctx)
    result_cls = nested(cls, result_name)
    results = []
    for res in request.resources:
        try:
            _authorize(ctx, AclOperation.ALTER_CONFIGS, res.resource_type, res.resource_name)
            if res.resource_type == BROKER:
                _check_broker_name(ctx, res.resource_name)
                raise InvalidConfigError("broker configs are static; restart to change them")
            if res.resource_type != TOPIC:
                raise InvalidConfigError(f"unsupported config resource type {res.resource_type}")
            logs = ctx.broker.logs
            if logs is None:
                raise InvalidConfigError("storage unavailable")
            current = dict(logs.topic(res.resource_name).configs)
            wanted = changes(res, current)
            # Parse everything first: an invalid value must fail the whole resource.
            LogConfig.from_topic_configs(wanted, base=ctx.broker.config.log_config())
            if not request.validate_only and ctx.broker.cluster is not None:
                from broker.cluster.admin import set_topic_config

                # Cluster-wide: every broker applies it from /config/topics/<t>.
                await ctx.broker.cluster.zk.run(set_topic_config, res.resource_name, wanted)
                logs.alter_configs(res.resource_name, wanted, replace=True)
            elif not request.validate_only:
                logs.alter_configs(res.resource_name, wanted, replace=True)
            code, message = ErrorCode.none, None
        except BrokerError as exc:
            code, message = exc.error_code, str(exc)
        results.append(
            build(
                result_cls,
                error_code=code,
                error_message=message,
                resource_type=res.resource_type,
                resource_name=res.resource_name,
            )
        )
    return build(cls, throttle_time=NO_THROTTLE, responses=tuple(results))
