"""Kafka broker properties: what is read, what is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.cli.serve import build_config
from broker.config import BrokerConfig
from broker.properties import PropertiesError, read_properties, to_config_fields


def test_a_kafka_server_properties_file(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(
        "# Kafka's sample file, trimmed\n"
        "broker.id=2\n"
        "listeners=PLAINTEXT://0.0.0.0:9093\n"
        "advertised.listeners=PLAINTEXT://kafka2:9093\n"
        "log.dirs=/var/lib/kafka\n"
        "num.partitions=3\n"
        "num.network.threads=3\n"
        "log.retention.hours=168\n"
        "zookeeper.connect=zk1:2181,zk2:2181/kafka\n"
        "min.insync.replicas=2\n"
        "unclean.leader.election.enable=false\n"
        "default.replication.factor=3\n"
    )
    config = build_config(path, ["replica.lag.time.max.ms=5000"], {"node_id": 7})
    assert isinstance(config, BrokerConfig)
    assert config.node_id == 7  # a flag beats the file
    assert (config.host, config.port) == ("0.0.0.0", 9093)
    assert config.advertised_address == ("kafka2", 9093)
    assert config.data_dir == Path("/var/lib/kafka")
    assert config.zookeeper_connect == "zk1:2181,zk2:2181/kafka"
    assert config.replica_lag_time_max_ms == 5000
    assert config.default_replication_factor == 3
    assert config.log_defaults == {"retention.ms": str(168 * 3_600_000), "min.insync.replicas": "2"}


def test_unknown_keys_are_refused_by_name() -> None:
    with pytest.raises(PropertiesError, match=r"log\.dirz"):
        to_config_fields({"log.dirz": "/x", "sasl.enabled.mechanisms": "PLAIN"})
    with pytest.raises(PropertiesError, match=r"ssl\.principal\.mapping\.rules"):
        to_config_fields({"ssl.principal.mapping.rules": "DEFAULT"})


def test_the_zookeeper_digest_is_no_property(tmp_path: Path) -> None:
    """``BrokerConfig.zookeeper_digest`` is set by code only (``sluice up --brokers N``): no
    key of a properties file or ``-o`` reaches it, and its password is in no repr."""
    from broker.config import ZkDigest

    for key in ("zookeeper.digest", "zookeeper_digest"):
        with pytest.raises(PropertiesError, match=key.replace(".", r"\.")):
            build_config(None, [f"{key}=sluice-hub:pw"], {})
    digest = ZkDigest("sluice-hub", "secret-7d1e")
    config = BrokerConfig(zookeeper_digest=digest)
    assert "secret-7d1e" not in repr(config) and "secret-7d1e" not in repr(digest)
    assert "zookeeper_digest" not in repr(config)
    with pytest.raises(ValueError):
        ZkDigest("a:b", "pw")


def test_listeners_are_parsed_kafka_style() -> None:
    fields = to_config_fields({
        "listeners": "PLAINTEXT://127.0.0.1:9092,CLIENT://0.0.0.0:9093",
        "advertised.listeners": "CLIENT://kafka.example:19093",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:SASL_SSL",
        "inter.broker.listener.name": "PLAINTEXT",
    })  # fmt: skip
    assert (fields["host"], fields["port"]) == ("127.0.0.1", 9092)
    client = fields["listeners"][1]
    assert (client.name, client.protocol, client.port) == ("CLIENT", "SASL_SSL", 9093)
    assert client.advertised == ("kafka.example", 19093)
    with pytest.raises(PropertiesError, match="CLIENT"):
        to_config_fields({"listeners": "CLIENT://:9093"})  # no protocol for that name


def test_properties_syntax(tmp_path: Path) -> None:
    path = tmp_path / "p.properties"
    path.write_text("! comment\na.b = 1\nc:2\nlong=x\\\n  y\n")
    assert read_properties(path) == {"a.b": "1", "c": "2", "long": "xy"}


def test_a_replica_fetch_wait_beyond_the_lag_time_is_refused() -> None:
    """Kafka's rule: an idle follower's long poll must end within replica.lag.time.max.ms."""
    with pytest.raises(ValueError, match=r"replica\.fetch\.wait\.max\.ms \(4000\)"):
        BrokerConfig(replica_fetch_wait_max_ms=4000, replica_lag_time_max_ms=3000)
    assert BrokerConfig(replica_fetch_wait_max_ms=3000, replica_lag_time_max_ms=3000)
