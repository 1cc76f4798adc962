"""Broker-wide settings: where to listen, what to advertise, where data lives, and defaults.

Field names are Kafka's broker property names, snake_cased (``auto.create.topics.enable`` ->
``auto_create_topics``), so a reader who knows Kafka knows what each one does. Topic-level
defaults (``log.retention.ms`` and friends) are kept as Kafka *topic* config names in
``log_defaults`` and turned into a ``LogConfig`` by :meth:`BrokerConfig.log_config`; that keeps
this module free of a storage import and lets DescribeConfigs report them by their real names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from broker.security.listeners import Listener

if TYPE_CHECKING:
    from broker.log.config import LogConfig
    from broker.security.authorizer import AuthorizerConfig

DEFAULT_PORT = 9092
INT_MAX = 2**31 - 1  # Kafka's Int.MaxValue: "no limit" for connection counts


@dataclass(frozen=True)
class ZkDigest:
    """A ZooKeeper ``digest`` identity (``user:password``), the password kept out of ``repr``.

    Not a Kafka property (Kafka logs in to ZooKeeper with SASL/JAAS, which is not implemented):
    only code sets it (``sluice up --brokers N``, ``sluice.hub_login``)."""

    username: str
    password: str = field(repr=False)

    def __post_init__(self) -> None:
        if not self.username or ":" in self.username:
            raise ValueError("a ZooKeeper digest user name is non-empty and has no ':'")
        if not self.password:
            raise ValueError("a ZooKeeper digest password must not be empty")


@dataclass(frozen=True)
class BrokerConfig:
    """Immutable settings of one broker process."""

    data_dir: Path = Path("./data")
    host: str = "127.0.0.1"
    """Address to bind; ``0.0.0.0`` listens everywhere."""
    port: int = DEFAULT_PORT
    """Port to bind; 0 picks a free one (the bound port is then advertised)."""
    advertised_host: str | None = None
    """Host clients are told to connect to (Metadata); defaults to ``host``, or to
    ``localhost`` when binding a wildcard address, which no client can connect to."""
    advertised_port: int | None = None
    node_id: int = 1
    rack: str | None = None
    listeners: tuple[Listener, ...] = ()
    """``listeners`` (+ ``advertised.listeners``, ``listener.security.protocol.map``); empty =
    one PLAINTEXT listener on host:port. ``host``/``port``/``advertised_*`` are the first
    listener's, so the ``--host``/``--port`` flags move it (:meth:`effective_listeners`)."""
    inter_broker_listener_name: str | None = None
    """``inter.broker.listener.name``: the listener other brokers replicate through (cluster
    mode registers its address); None = the first listener."""
    security: Mapping[str, str] = field(default_factory=dict, repr=False)  # holds passwords
    """The ``ssl.*``, ``sasl.*`` and ``listener.name.*`` properties as given, read per listener
    by ``broker.security.listener_security`` (which refuses the ones it does not know)."""

    auto_create_topics: bool = True
    """``auto.create.topics.enable``: Metadata and Produce for an unknown topic create it."""
    num_partitions: int = 1
    """``num.partitions``: partitions of auto-created topics and of CreateTopics with -1."""
    max_partitions_per_topic: int = 10_000
    """Upper bound for CreateTopics/CreatePartitions (not in Kafka; guards against typos)."""
    max_request_size: int = 100 * 1024 * 1024
    """``socket.request.max.bytes``: a larger frame closes the connection before it is read."""
    queued_max_request_bytes: int | None = None
    """``queued.max.request.bytes``: bytes reserved for requests being received or handled,
    across all connections; beyond it connections wait before reading a request body (see
    ``broker/protocol/limits.py``). None (the default) = ``max_request_size``; -1 = no limit
    (Kafka's default, which leaves memory unbounded)."""
    connections_max_idle_ms: int = 600_000
    """``connections.max.idle.ms``: a connection that sends nothing for this long is closed."""
    connections_max_reauth_ms: int = 0
    """``connections.max.reauth.ms`` (KIP-368): a SASL session lasts this long; the client must
    re-authenticate on the connection before it ends, or its next request closes it. 0 (Kafka's
    default): sessions never end."""
    max_connections: int = INT_MAX
    """``max.connections``: connections beyond this are closed on accept."""
    max_connections_per_ip: int = INT_MAX
    """``max.connections.per.ip``: per client address; beyond it closed on accept."""
    max_connections_per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    """``max.connections.per.ip.overrides``: host name or IP -> its own limit."""
    metrics_port: int = 0
    """``metrics.port`` (Sluice's own): serve Prometheus ``/metrics`` and ``/ready`` over plain
    HTTP on ``host`` at this port; 0 (the default) = no metrics, and no counting at all."""
    log_cleaner_backoff_ms: int = 15_000
    """``log.cleaner.backoff.ms``: how long the log cleaner sleeps between passes."""
    log_defaults: Mapping[str, str] = field(default_factory=dict)
    """Topic config defaults by Kafka topic-config name (``retention.ms`` ...), overriding the
    built-in ``LogConfig`` defaults for every topic without its own override."""

    authorizer: AuthorizerConfig | None = None
    """``authorizer.class.name`` (+ ``super.users``, ``allow.everyone.if.no.acl.found``): ACLs
    are enforced only when set, as in Kafka; None = every request is allowed."""

    quota_window_num: int = 11
    """``quota.window.num``: rate windows each client quota is measured over."""
    quota_window_size_seconds: int = 1
    """``quota.window.size.seconds``: the length of one of them."""

    # Consumer-group settings (Kafka's names and defaults), read by the group coordinator.
    group_min_session_timeout_ms: int = 6_000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3_000
    offsets_topic_num_partitions: int = 50
    offsets_retention_minutes: int = 7 * 24 * 60
    offsets_topic_replication_factor: int = 3
    """``offsets.topic.replication.factor``; capped at the live broker count when the topic is
    first created (Kafka would wait for that many brokers instead)."""

    # Transactions (docs/transactions.md), Kafka's names and defaults.
    transaction_state_log_num_partitions: int = 50
    transaction_state_log_replication_factor: int = 3
    """Capped at the live broker count when the topic is first created (cluster mode)."""
    transaction_state_log_min_isr: int = 2
    """``min.insync.replicas`` of ``__transaction_state``, capped at its replication factor."""
    transaction_state_log_segment_bytes: int = 100 * 1024 * 1024
    transaction_max_timeout_ms: int = 900_000
    """A producer's ``transaction.timeout.ms`` above this gets INVALID_TRANSACTION_TIMEOUT."""
    transactional_id_expiration_ms: int = 7 * 24 * 3600 * 1000
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int = 10_000
    transaction_remove_expired_transaction_cleanup_interval_ms: int = 3_600_000

    # Cluster mode (see docs/cluster.md): all of these are ignored without zookeeper_connect.
    zookeeper_connect: str | None = None
    """``zookeeper.connect``: ``host:port[,host:port...][/chroot]``; None = single node."""
    zookeeper_session_timeout_ms: int = 18_000
    zookeeper_connection_timeout_ms: int | None = None
    zookeeper_digest: ZkDigest | None = field(default=None, repr=False)
    """Not a property (no key of server.properties sets it): when set, the broker's ZooKeeper
    clients log in with this ``digest`` identity and create every node, the chroot included,
    readable and writable by it alone (``broker.cluster.zk_client``). ``sluice up --brokers N``
    sets it; None = no ZooKeeper authentication, nodes open to every client (Kafka's
    ``zookeeper.set.acl=false``)."""
    default_replication_factor: int = 1
    unclean_leader_election_enable: bool = False
    replica_lag_time_max_ms: int = 30_000
    replica_fetch_wait_max_ms: int = 500
    replica_fetch_max_bytes: int = 1024 * 1024
    replica_fetch_response_max_bytes: int = 10 * 1024 * 1024
    replica_high_watermark_checkpoint_interval_ms: int = 5_000
    controlled_shutdown_enable: bool = True
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 5_000
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_seconds: int = 300
    leader_imbalance_per_broker_percentage: int = 10
    request_timeout_ms: int = 30_000

    @property
    def clustered(self) -> bool:
        """True when this broker is part of a ZooKeeper-coordinated cluster."""
        return self.zookeeper_connect is not None

    def __post_init__(self) -> None:
        if self.connections_max_reauth_ms < 0:
            raise ValueError(
                f"connections.max.reauth.ms must be >= 0, got {self.connections_max_reauth_ms}"
            )
        if self.connections_max_idle_ms <= 0:
            raise ValueError(
                f"connections.max.idle.ms must be positive, got {self.connections_max_idle_ms}"
            )
        if self.log_cleaner_backoff_ms <= 0:
            raise ValueError(
                f"log.cleaner.backoff.ms must be positive, got {self.log_cleaner_backoff_ms}"
            )
        if self.quota_window_num < 1 or self.quota_window_size_seconds < 1:
            raise ValueError("quota.window.num and quota.window.size.seconds must be >= 1")
        if not 0 <= self.metrics_port <= 65_535:
            raise ValueError(f"metrics.port must be 0 (off) or a TCP port, got {self.metrics_port}")
        if self.max_connections < 0:
            raise ValueError(f"max.connections must be >= 0, got {self.max_connections}")
        if self.max_connections_per_ip < 0 or (
            self.max_connections_per_ip == 0 and not self.max_connections_per_ip_overrides
        ):
            raise ValueError(
                "max.connections.per.ip must be > 0, or 0 only together with "
                f"max.connections.per.ip.overrides; got {self.max_connections_per_ip}"
            )
        for host, count in self.max_connections_per_ip_overrides.items():
            if count < 0:
                raise ValueError(f"max.connections.per.ip.overrides: {host} has {count} < 0")
        for name in (
            "transaction_state_log_num_partitions", "transaction_state_log_replication_factor",
            "transaction_state_log_min_isr", "transaction_max_timeout_ms",
            "transaction_abort_timed_out_transaction_cleanup_interval_ms",
            "transaction_remove_expired_transaction_cleanup_interval_ms",
        ):  # fmt: skip
            if getattr(self, name) <= 0:
                raise ValueError(f"{name.replace('_', '.')} must be positive")
        if self.replica_fetch_wait_max_ms > self.replica_lag_time_max_ms:
            # Kafka refuses this too: a caught-up follower parked in its long poll would not be
            # heard from within the lag time and would leave the ISR of an idle partition.
            raise ValueError(
                f"replica.fetch.wait.max.ms ({self.replica_fetch_wait_max_ms}) must not exceed "
                f"replica.lag.time.max.ms ({self.replica_lag_time_max_ms})"
            )
        queued = self.queued_max_request_bytes
        if queued is not None and 0 < queued < self.max_request_size:
            raise ValueError(
                f"queued.max.request.bytes ({queued}) must be at least socket.request.max.bytes "
                f"({self.max_request_size}), or -1 for no limit"
            )

    @property
    def queued_request_bytes_limit(self) -> int:
        """The effective ``queued.max.request.bytes`` (-1 = unbounded)."""
        for name in (
            "transaction_state_log_num_partitions", "transaction_state_log_replication_factor",
            "transaction_state_log_min_isr", "transaction_max_timeout_ms",
            "transaction_abort_timed_out_transaction_cleanup_interval_ms",
            "transaction_remove_expired_transaction_cleanup_interval_ms",
        ):  # fmt: skip
            if getattr(self, name) <= 0:
                raise ValueError(f"{name.replace('_', '.')} must be positive")
        queued = self.queued_max_request_bytes
        return self.max_request_size if queued is None else queued

    def log_config(self) -> LogConfig:
        """The ``LogConfig`` every topic starts from (built-in defaults + ``log_defaults``)."""
        from broker.log.config import LogConfig

        return LogConfig.from_topic_configs(self.log_defaults)

    @property
    def advertised_address(self) -> tuple[str, int]:
        """The first listener's (host, port), as put in Metadata for its clients."""
        return self.effective_listeners()[0].advertised

    def effective_listeners(self) -> tuple[Listener, ...]:
        """The listeners to open, the first one at ``host``:``port`` (flags beat the file)."""
        first = Listener(
            "PLAINTEXT", "PLAINTEXT", self.host, self.port, self.advertised_host,
            self.advertised_port,
        )  # fmt: skip
        if self.listeners:
            lead = self.listeners[0]
            first = Listener(lead.name, lead.protocol, *first_fields(first))
        return (first, *self.listeners[1:])

    def listener(self, name: str | None) -> Listener:
        """The listener called ``name`` (None or unknown: the first one)."""
        listeners = self.effective_listeners()
        return next((item for item in listeners if item.name == name), listeners[0])

    @property
    def inter_broker_listener(self) -> Listener:
        return self.listener(self.inter_broker_listener_name)


def first_fields(listener: Listener) -> tuple[str, int, str | None, int | None]:
    return listener.host, listener.port, listener.advertised_host, listener.advertised_port
