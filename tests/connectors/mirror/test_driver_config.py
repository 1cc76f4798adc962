"""``mm2.properties`` -> flows, as Kafka's MirrorMakerConfig derives them."""

from __future__ import annotations

import pytest

from connectors.mirror.config import MirrorSourceConfig
from connectors.mirror.driver_config import DriverConfig, DriverConfigError, parse_properties
from connectors.mirror.source_connector import MirrorSourceConnector

FILE = """
# two clusters, one flow
clusters = A, B
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
B.offset.flush.interval.ms = 500
A.consumer.fetch.min.bytes = 1000
security.protocol = PLAINTEXT
A->B.enabled = true
A->B.topics = orders, pay.*
replication.factor = 1
offset.storage.replication.factor = 1
tasks.max = 4
"""


def test_flows_run_where_enabled_or_heartbeating() -> None:
    flows = {f.name: f for f in DriverConfig(parse_properties(FILE)).flows()}
    assert set(flows) == {"A->B", "B->A"}  # B->A only emits heartbeats into A
    b_to_a = flows["B->A"].connectors
    assert b_to_a["MirrorSourceConnector"]["enabled"] == "false"
    no_beats = DriverConfig(parse_properties(FILE + "emit.heartbeats.enabled = false\n"))
    assert [f.name for f in no_beats.flows()] == ["A->B"]


def test_worker_of_a_flow_lives_on_its_target() -> None:
    flow = DriverConfig(parse_properties(FILE)).flow("A", "B")
    worker = flow.worker
    assert worker["bootstrap.servers"] == "b:9092"
    assert worker["group.id"] == "A-mm2"
    assert worker["offset.storage.topic"] == "mm2-offsets.A.internal"
    assert worker["config.storage.topic"] == "mm2-configs.A.internal"
    assert worker["status.storage.topic"] == "mm2-status.A.internal"
    assert worker["offset.flush.interval.ms"] == "500"
    assert worker["replication.factor"] == "1"
    assert worker["value.converter"].endswith("ByteArrayConverter")
    assert worker["producer.security.protocol"] == "PLAINTEXT"


def test_connector_configs_of_a_flow() -> None:
    flow = DriverConfig(parse_properties(FILE)).flow("A", "B")
    source = flow.connectors["MirrorSourceConnector"]
    assert source["connector.class"] == "org.apache.kafka.connect.mirror.MirrorSourceConnector"
    assert source["source.cluster.alias"] == "A" and source["target.cluster.alias"] == "B"
    assert source["source.cluster.bootstrap.servers"] == "a:9092"
    assert source["target.cluster.bootstrap.servers"] == "b:9092"
    assert source["source.cluster.security.protocol"] == "PLAINTEXT"
    assert source["source.consumer.fetch.min.bytes"] == "1000"
    assert source["topics"] == "orders, pay.*"
    assert source["enabled"] == "true" and source["tasks.max"] == "4"
    assert "offset.storage.replication.factor" not in source
    assert MirrorSourceConnector.validate(source) == {}
    assert MirrorSourceConfig.parse(source).replication_factor == 1


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("clusters = A\nA.bootstrap.servers = a\n", "clusters"),
        ("A.bootstrap.servers = a\n", "clusters"),
        ("clusters = A, B\nA.bootstrap.servers = a\nB.bootstrap.servers = b\nbogus = 1\n", "bogus"),
        (
            "clusters = A, B\nA.bootstrap.servers = a\nB.bootstrap.servers = b\n"
            "config.providers = file\n",
            "config.providers",
        ),
    ],
)
def test_bad_files_name_the_key(text: str, key: str) -> None:
    with pytest.raises(DriverConfigError, match=key):
        DriverConfig(parse_properties(text)).flows()


def test_missing_bootstrap_is_named() -> None:
    with pytest.raises(DriverConfigError, match=r"B\.bootstrap\.servers"):
        DriverConfig(parse_properties("clusters = A, B\nA.bootstrap.servers = a\n")).flows()


def test_properties_syntax() -> None:
    props = parse_properties("a = 1\nb: 2\n! comment\nc 3\nd = x \\\n  y\n")
    assert props == {"a": "1", "b": "2", "c": "3", "d": "x y"}


def test_clusters_option_runs_the_flows_into_those_clusters() -> None:
    """``sluice mirror --clusters B`` (sluice/mirror_cli.py): only flows that target B."""
    from sluice.mirror_cli import MirrorDriver

    props = parse_properties(FILE + "B->A.enabled = true\n")
    assert [f.name for f in MirrorDriver(props, ["B"]).flows] == ["A->B"]
    assert sorted(f.name for f in MirrorDriver(props).flows) == ["A->B", "B->A"]
    with pytest.raises(ValueError, match="C"):
        MirrorDriver(props, ["C"])
