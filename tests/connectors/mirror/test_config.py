"""Mirror connector configs: MM2's keys and defaults, what is refused by name, client settings."""

from __future__ import annotations

from typing import Any

import pytest

from connectors.mirror.checkpoint_connector import MirrorCheckpointConnector
from connectors.mirror.clients import ClientConfigError, client_config
from connectors.mirror.config import MirrorCheckpointConfig, MirrorSourceConfig
from connectors.mirror.heartbeat_connector import MirrorHeartbeatConnector
from connectors.mirror.source_connector import MirrorSourceConnector
from hub.api import ConfigError

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
CONVERTERS = {"key.converter": BYTES, "value.converter": BYTES, "header.converter": BYTES}


def config(**extra: Any) -> dict[str, Any]:
    return {"name": "m", "source.cluster.alias": "A", "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": "a:9092", **CONVERTERS, **extra}  # fmt: skip


def test_defaults_are_mirrormaker_2s() -> None:
    cfg = MirrorSourceConfig.parse(config())
    assert cfg.topics == ".*"
    assert cfg.topics_exclude == r".*[\-\.]internal, .*\.replica, __.*"
    assert (cfg.replication_factor, cfg.offset_syncs_topic_replication_factor) == (2, 3)
    assert cfg.offset_lag_max == 100
    assert cfg.refresh_topics_interval_seconds == 600
    assert (cfg.sync_topic_acls_enabled, cfg.sync_topic_acls_interval_seconds) == (True, 600)
    assert cfg.offset_syncs_topic_location == "source"
    assert cfg.offset_syncs_topic() == "mm2-offset-syncs.B.internal"
    cp = MirrorCheckpointConfig.parse(config())
    assert cp.emit_checkpoints_interval_seconds == 60
    assert cp.sync_group_offsets_enabled is False
    assert cp.groups_exclude == "console-consumer-.*, connect-.*, __.*"
    assert cp.checkpoints_topic() == "A.checkpoints.internal"
    assert (
        MirrorCheckpointConfig.parse(
            config(**{"offset-syncs.topic.location": "target"})
        ).offset_syncs_topic()
        == "mm2-offset-syncs.A.internal"
    )


def test_source_alias_is_required() -> None:
    raw = config()
    del raw["source.cluster.alias"]
    with pytest.raises(ConfigError) as info:
        MirrorSourceConfig.parse(raw)
    assert "source.cluster.alias" in info.value.errors


def test_bad_values_are_named() -> None:
    with pytest.raises(ConfigError) as info:
        MirrorSourceConfig.parse(config(**{
            "replication.policy.class": "com.example.MyPolicy", "topics": "orders, (",
            "refresh.topics.interval.seconds": "0", "offset-syncs.topic.location": "east",
        }))  # fmt: skip
    assert set(info.value.errors) == {
        "replication.policy.class", "topics", "refresh.topics.interval.seconds",
        "offset-syncs.topic.location",
    }  # fmt: skip


def test_unsupported_mirrormaker_keys_are_refused_by_name() -> None:
    with pytest.raises(ConfigError) as info:
        MirrorSourceConfig.parse(config(**{
            "topic.filter.class": "com.example.Filter",
            "forwarding.admin.class": "com.example.Admin",
            "metric.reporters": "com.example.Reporter",
            "topics.blacklist": "x",
            # a Kafka Connect key the runtime implements (KIP-618): not the mirror config's to
            # refuse; the runtime refuses "required" for a connector that cannot promise it
            "exactly.once.support": "required",
            "my.own.key": "kept",
        }))  # fmt: skip
    assert set(info.value.errors) == {
        "topic.filter.class", "forwarding.admin.class", "metric.reporters", "topics.blacklist",
    }  # fmt: skip
    assert "topic.filter.class=" in info.value.errors["topic.filter.class"][0]
    MirrorSourceConfig.parse(config(**{
        "sync.topic.acls.enabled": "true",
        "topic.filter.class": "org.apache.kafka.connect.mirror.DefaultTopicFilter",
        "groups": "g.*", "emit.heartbeats.interval.seconds": "5",  # other connectors' keys
        "source.consumer.fetch.min.bytes": "1", "admin.request.timeout.ms": "1",
    }))  # fmt: skip
    # What no single key shows: keys under the cluster prefixes that are not client settings,
    # security keys that (as in Kafka) would reach no client.
    errors = MirrorSourceConnector.validate(config(**{
        "source.cluster.client.id": "x", "security.protocol": "SSL",
    }))  # fmt: skip
    assert set(errors) == {"source.cluster.client.id", "security.protocol"}
    assert MirrorSourceConnector.validate(config()) == {}


def test_raw_bytes_need_byte_array_converters() -> None:
    raw = config()
    del raw["header.converter"]
    raw["value.converter"] = "org.apache.kafka.connect.json.JsonConverter"
    errors = MirrorSourceConnector.validate(raw)
    assert set(errors) == {"value.converter", "header.converter"}
    # Heartbeats and checkpoints carry no headers.
    del raw["value.converter"]
    assert set(MirrorHeartbeatConnector.validate(raw)) == {"value.converter"}
    assert MirrorHeartbeatConnector.validate({**raw, "value.converter": "ByteArrayConverter"}) == {}


def test_checkpoints_need_offset_syncs() -> None:
    errors = MirrorCheckpointConnector.validate(
        config(**{"emit.checkpoints.enabled": "false", "emit.offset-syncs.enabled": "false"})
    )
    assert set(errors) == {"emit.checkpoints.enabled", "emit.offset-syncs.enabled"}
    assert MirrorCheckpointConnector.validate(config(enabled="false", **{
        "emit.checkpoints.enabled": "false"})) == {}  # fmt: skip


def test_client_settings_follow_mm2_prefixes() -> None:
    raw = config(**{
        "source.cluster.security.protocol": "SASL_SSL",
        "source.cluster.sasl.mechanism": "SCRAM-SHA-512",
        "source.cluster.sasl.jaas.config": 'org.apache.kafka.common.security.scram.'
        'ScramLoginModule required username="alice" password="s\\"cret";',
        "consumer.fetch.min.bytes": "10",
        "source.consumer.fetch.min.bytes": "20",
        "consumer.poll.timeout.ms": "500",
        "admin.timeout.ms": "1000",
        "target.cluster.bootstrap.servers": "b:9092",
    })  # fmt: skip
    consumer = client_config(raw, "source", "consumer", "A->B|m", "replication-consumer")
    assert consumer == {
        "bootstrap.servers": "a:9092", "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": 's"cret',
        "fetch.min.bytes": "20", "client.id": "A->B|m|replication-consumer",
    }  # fmt: skip
    admin = client_config(raw, "target", "admin", "A->B|m", "r")
    assert admin == {"bootstrap.servers": "b:9092", "client.id": "A->B|m|r"}


def test_java_only_client_keys() -> None:
    pem = {"ssl.truststore.location": "/ca.pem", "ssl.truststore.type": "PEM",
           "ssl.endpoint.identification.algorithm": ""}  # fmt: skip
    raw = config(**{f"source.cluster.{k}": v for k, v in pem.items()})
    settings = client_config(raw, "source", "admin", "l", "r")
    assert settings["ssl.ca.location"] == "/ca.pem"
    assert settings["ssl.endpoint.identification.algorithm"] == "none"
    assert "ssl.truststore.location" not in settings
    with pytest.raises(ClientConfigError, match=r"ssl\.truststore\.location"):
        client_config(config(**{"source.cluster.ssl.truststore.location": "/t.jks"}),
                      "source", "admin", "l", "r")  # fmt: skip
    with pytest.raises(ClientConfigError, match=r"sasl\.jaas\.config"):
        client_config(config(**{"source.cluster.sasl.jaas.config": "com.Krb required;"}),
                      "source", "admin", "l", "r")  # fmt: skip
