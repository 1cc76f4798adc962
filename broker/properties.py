"""Kafka broker properties (``server.properties``) -> :class:`BrokerConfig`.

``sluice broker --config server.properties`` reads Kafka's own file format and key names, so a
Kafka user's file mostly works as is. Precedence: built-in defaults < the file < ``--override
key=value`` < dedicated flags (``--broker-id``, ``--zookeeper`` ...), the order Kafka applies.

Every key does what it does in Kafka or is refused by name: a key this broker does not
implement raises :class:`PropertiesError` naming it, except a short allow-list of JVM and
thread-pool tuning keys (``num.network.threads`` and friends) that have no meaning for an
asyncio broker; those are logged once at WARNING and ignored. Topic-level defaults
(``log.retention.ms``, ``min.insync.replicas`` ...) go into ``log_defaults`` under their topic
config names, exactly as DescribeConfigs reports them.

Listeners: ``listeners``, ``advertised.listeners``, ``listener.security.protocol.map`` and
``inter.broker.listener.name`` as in Kafka (``broker/security/listeners.py``); the ``ssl.*``,
``sasl.*`` and ``listener.name.*`` keys go to ``BrokerConfig.security`` and are checked by name
(``broker/security/listener_security.py``: a key it does not implement is refused).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from broker.errors import PropertiesError as PropertiesError
from broker.security.authorizer import authorizer_from_properties
from broker.security.listener_security import check_security_keys, is_security_key
from broker.security.listeners import ListenerError, parse_listeners

log = logging.getLogger(__name__)


def _bool(value: str) -> bool:
    low = value.strip().lower()
    if low not in ("true", "false"):
        raise ValueError(f"expected true or false, got {value!r}")
    return low == "true"


def _overrides(value: str) -> dict[str, int]:
    from broker.protocol.limits import parse_overrides

    return dict(parse_overrides(value))


# Kafka broker key -> (BrokerConfig field, parser).
_FIELDS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "broker.id": ("node_id", int),
    "zookeeper.connect": ("zookeeper_connect", str),
    "zookeeper.session.timeout.ms": ("zookeeper_session_timeout_ms", int),
    "zookeeper.connection.timeout.ms": ("zookeeper_connection_timeout_ms", int),
    "num.partitions": ("num_partitions", int),
    "auto.create.topics.enable": ("auto_create_topics", _bool),
    "default.replication.factor": ("default_replication_factor", int),
    "unclean.leader.election.enable": ("unclean_leader_election_enable", _bool),
    "replica.lag.time.max.ms": ("replica_lag_time_max_ms", int),
    "replica.fetch.wait.max.ms": ("replica_fetch_wait_max_ms", int),
    "replica.fetch.max.bytes": ("replica_fetch_max_bytes", int),
    "replica.fetch.response.max.bytes": ("replica_fetch_response_max_bytes", int),
    "replica.high.watermark.checkpoint.interval.ms": (
        "replica_high_watermark_checkpoint_interval_ms",
        int,
    ),
    "controlled.shutdown.enable": ("controlled_shutdown_enable", _bool),
    "controlled.shutdown.max.retries": ("controlled_shutdown_max_retries", int),
    "controlled.shutdown.retry.backoff.ms": ("controlled_shutdown_retry_backoff_ms", int),
    "auto.leader.rebalance.enable": ("auto_leader_rebalance_enable", _bool),
    "leader.imbalance.check.interval.seconds": ("leader_imbalance_check_interval_seconds", int),
    "leader.imbalance.per.broker.percentage": ("leader_imbalance_per_broker_percentage", int),
    "request.timeout.ms": ("request_timeout_ms", int),
    "quota.window.num": ("quota_window_num", int),
    "quota.window.size.seconds": ("quota_window_size_seconds", int),
    "socket.request.max.bytes": ("max_request_size", int),
    "queued.max.request.bytes": ("queued_max_request_bytes", int),
    "connections.max.idle.ms": ("connections_max_idle_ms", int),
    "connections.max.reauth.ms": ("connections_max_reauth_ms", int),
    "max.connections": ("max_connections", int),
    "max.connections.per.ip": ("max_connections_per_ip", int),
    "max.connections.per.ip.overrides": ("max_connections_per_ip_overrides", _overrides),
    "log.cleaner.backoff.ms": ("log_cleaner_backoff_ms", int),
    "metrics.port": ("metrics_port", int),
    "broker.rack": ("rack", str),
    "group.initial.rebalance.delay.ms": ("group_initial_rebalance_delay_ms", int),
    "group.min.session.timeout.ms": ("group_min_session_timeout_ms", int),
    "group.max.session.timeout.ms": ("group_max_session_timeout_ms", int),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", int),
    "offsets.topic.replication.factor": ("offsets_topic_replication_factor", int),
    "offsets.retention.minutes": ("offsets_retention_minutes", int),
    "transaction.state.log.num.partitions": ("transaction_state_log_num_partitions", int),
    "transaction.state.log.replication.factor": (
        "transaction_state_log_replication_factor",
        int,
    ),
    "transaction.state.log.min.isr": ("transaction_state_log_min_isr", int),
    "transaction.state.log.segment.bytes": ("transaction_state_log_segment_bytes", int),
    "transaction.max.timeout.ms": ("transaction_max_timeout_ms", int),
    "transactional.id.expiration.ms": ("transactional_id_expiration_ms", int),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": (
        "transaction_abort_timed_out_transaction_cleanup_interval_ms",
        int,
    ),
    "transaction.remove.expired.transaction.cleanup.interval.ms": (
        "transaction_remove_expired_transaction_cleanup_interval_ms",
        int,
    ),
}

# Broker keys that set a topic config default (Kafka's synonyms), by topic config name.
_TOPIC_DEFAULTS = {
    "log.segment.bytes": "segment.bytes",
    "log.roll.ms": "segment.ms",
    "log.index.size.max.bytes": "segment.index.bytes",
    "log.index.interval.bytes": "index.interval.bytes",
    "log.retention.ms": "retention.ms",
    "log.retention.bytes": "retention.bytes",
    "log.cleanup.policy": "cleanup.policy",
    "log.cleaner.delete.retention.ms": "delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms": "min.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio": "min.cleanable.dirty.ratio",
    "log.flush.interval.messages": "flush.messages",
    "log.flush.interval.ms": "flush.ms",
    "message.max.bytes": "max.message.bytes",
    "log.message.timestamp.type": "message.timestamp.type",
    "compression.type": "compression.type",
    "min.insync.replicas": "min.insync.replicas",
}
# Coarser units Kafka also accepts; the finer key wins when both are given (Kafka's rule).
_SCALED = {
    "log.retention.minutes": ("retention.ms", 60_000, "log.retention.ms"),
    "log.retention.hours": ("retention.ms", 3_600_000, "log.retention.ms"),
    "log.roll.hours": ("segment.ms", 3_600_000, "log.roll.ms"),
}

# Tuning of Kafka's JVM thread pools and socket buffers: no meaning here, warned and ignored.
IGNORED = frozenset(
    {
        "num.network.threads",
        "num.io.threads",
        "num.replica.fetchers",
        "num.recovery.threads.per.data.dir",
        "background.threads",
        "queued.max.requests",
        "socket.send.buffer.bytes",
        "socket.receive.buffer.bytes",
        "replica.socket.receive.buffer.bytes",
        "log.retention.check.interval.ms",
        "log.cleaner.threads",
        "log.cleaner.dedupe.buffer.size",
        "log.cleaner.io.buffer.size",
        "transaction.state.log.load.buffer.size",
    }
)

_LISTENER_KEYS = ("listeners", "advertised.listeners", "listener.security.protocol.map")

# ACL authorization (docs/security.md#acls), read by broker.security.authorizer.
_AUTHORIZER_KEYS = frozenset(
    {"authorizer.class.name", "super.users", "allow.everyone.if.no.acl.found"}
)


def read_properties(path: Path) -> dict[str, str]:
    """Java ``.properties`` lines: ``key=value`` or ``key: value``, ``#``/``!`` comments,
    trailing ``\\`` continuations. Escapes other than continuation are not needed by any
    broker key and are kept literally."""
    props: dict[str, str] = {}
    pending = ""
    for raw in path.read_text().splitlines():
        line = pending + raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            props[line] = ""
            continue
        props[line[:sep].strip()] = line[sep + 1 :].strip()
    return props


def to_config_fields(props: Mapping[str, str]) -> dict[str, Any]:
    """Broker properties -> keyword arguments for :class:`BrokerConfig`.

    Raises PropertiesError naming every unknown key at once, so a user fixes their file in one
    go. ``log_defaults`` holds the topic config defaults.
    """
    fields: dict[str, Any] = {}
    security: dict[str, str] = {}
    log_defaults: dict[str, str] = {}
    unknown: list[str] = []
    for key, value in props.items():
        try:
            if key in _FIELDS:
                name, parse = _FIELDS[key]
                fields[name] = parse(value)
            elif key in _TOPIC_DEFAULTS:
                log_defaults[_TOPIC_DEFAULTS[key]] = value
            elif key in _SCALED:
                topic_key, scale, finer = _SCALED[key]
                if finer not in props:
                    log_defaults.setdefault(topic_key, str(int(value) * scale))
            elif key in ("log.dirs", "log.dir"):
                dirs = [d.strip() for d in value.split(",") if d.strip()]
                if len(dirs) != 1:
                    raise PropertiesError(f"{key}: exactly one directory is supported, got {value}")
                if key == "log.dir" and "log.dirs" in props:
                    continue
                fields["data_dir"] = Path(dirs[0])
            elif key in _AUTHORIZER_KEYS:
                pass  # read together below (they only mean something with each other)
            elif key in _LISTENER_KEYS:
                continue  # all three together, below
            elif key == "inter.broker.listener.name":
                fields["inter_broker_listener_name"] = value.strip().upper()
            elif is_security_key(key):
                security[key] = value
            elif key in IGNORED:
                log.warning("ignoring JVM/thread tuning property", extra={"key": key})
            else:
                unknown.append(key)
        except ValueError as exc:
            if isinstance(exc, PropertiesError):
                raise
            raise PropertiesError(f"{key}={value!r}: {exc}") from None
    try:
        authorizer = authorizer_from_properties(props)
    except ValueError as exc:
        raise PropertiesError(str(exc)) from None
    if authorizer is not None:
        fields["authorizer"] = authorizer
    elif any(key in props for key in _AUTHORIZER_KEYS - {"authorizer.class.name"}):
        raise PropertiesError(
            "super.users and allow.everyone.if.no.acl.found need authorizer.class.name "
            "(without an authorizer every request is allowed, as in Kafka)"
        )
    if unknown:
        raise PropertiesError(
            "unsupported broker properties: "
            + ", ".join(sorted(unknown))
            + " (remove them; see docs/cluster.md for the keys this broker reads)"
        )
    if log_defaults:
        fields["log_defaults"] = log_defaults
    fields.update(_listener_fields(props, security))
    return fields


def _listener_fields(props: Mapping[str, str], security: dict[str, str]) -> dict[str, Any]:
    """``listeners`` & co -> the ``listeners`` tuple and the first listener's address fields
    (which ``--host``/``--port`` then override); security keys checked against them."""
    fields: dict[str, Any] = {}
    try:
        if "listeners" in props:
            listeners = parse_listeners(
                props["listeners"], props.get("advertised.listeners"),
                props.get("listener.security.protocol.map"),
            )  # fmt: skip
        elif "advertised.listeners" in props or "listener.security.protocol.map" in props:
            # advertising without binding: the default PLAINTEXT listener on 127.0.0.1:9092
            listeners = parse_listeners(
                "PLAINTEXT://127.0.0.1:9092", props.get("advertised.listeners"),
                props.get("listener.security.protocol.map"),
            )  # fmt: skip
        else:
            listeners = ()
        if listeners:
            first = listeners[0]
            fields.update(listeners=listeners, host=first.host, port=first.port,
                          advertised_host=first.advertised_host,
                          advertised_port=first.advertised_port)  # fmt: skip
        names = [item.name for item in listeners] or ["PLAINTEXT"]
        inter = props.get("inter.broker.listener.name")
        if inter is not None and inter.strip().upper() not in names:
            raise ListenerError(f"inter.broker.listener.name: {inter} is not in listeners")
        check_security_keys(security, listeners)
    except ListenerError as exc:
        raise PropertiesError(str(exc)) from None
    if security:
        fields["security"] = security
    return fields
