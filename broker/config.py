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

if TYPE_CHECKING:
    from broker.log.config import LogConfig

DEFAULT_PORT = 9092


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

    auto_create_topics: bool = True
    """``auto.create.topics.enable``: Metadata and Produce for an unknown topic create it."""
    num_partitions: int = 1
    """``num.partitions``: partitions of auto-created topics and of CreateTopics with -1."""
    max_partitions_per_topic: int = 10_000
    """Upper bound for CreateTopics/CreatePartitions (not in Kafka; guards against typos)."""
    max_request_size: int = 100 * 1024 * 1024
    """``socket.request.max.bytes``: a larger frame closes the connection before it is read."""
    log_defaults: Mapping[str, str] = field(default_factory=dict)
    """Topic config defaults by Kafka topic-config name (``retention.ms`` ...), overriding the
    built-in ``LogConfig`` defaults for every topic without its own override."""

    # Consumer-group settings (Kafka's names and defaults), read by the group coordinator.
    group_min_session_timeout_ms: int = 6_000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3_000
    offsets_topic_num_partitions: int = 50
    offsets_retention_minutes: int = 7 * 24 * 60

    def log_config(self) -> LogConfig:
        """The ``LogConfig`` every topic starts from (built-in defaults + ``log_defaults``)."""
        from broker.log.config import LogConfig

        return LogConfig.from_topic_configs(self.log_defaults)

    @property
    def advertised_address(self) -> tuple[str, int]:
        """The (host, port) put in Metadata and DescribeCluster responses."""
        host = self.advertised_host or self.host
        if host in ("", "0.0.0.0", "::"):
            host = "localhost"
        return host, self.advertised_port or self.port
