"""``GET /connector-plugins`` names the Java class a plugin stands in for, as Kafka Connect
tools match on ``class``; ``connectorsOnly=false`` adds transforms (``$Key``/``$Value``),
predicates and converters as Connect 3.2+ does, and KIP-769 serves each one's config keys."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from hub.api import paths
from hub.rest import create_app
from hub.runtime.config import WorkerConfig
from hub.runtime.herder import Herder
from hub.runtime.storage import MemoryConfigStore, MemoryOffsetStore, MemoryStatusStore
from tests.fixtures.rest_auth import authed, secured


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    # The real plugin registry behind a herder that is never started: listing and describing
    # plugins needs no broker.
    config = WorkerConfig.from_mapping(secured({"bootstrap.servers": "127.0.0.1:1"}))
    roots = paths.allowed_roots()  # a worker sets them process-wide; this fixture outlives a test
    herder = Herder(
        config,
        config_store=MemoryConfigStore(),
        offset_store=MemoryOffsetStore(),
        status_store=MemoryStatusStore(),
    )
    paths.set_allowed_roots(roots)
    with authed(create_app(herder, config)) as test_client:
        yield test_client


def test_connectors_carry_their_java_class_names(client: TestClient) -> None:
    plugins = client.get("/connector-plugins").json()
    by_class = {p["class"]: p["type"] for p in plugins}
    assert by_class["org.apache.kafka.connect.file.FileStreamSourceConnector"] == "source"
    assert by_class["org.apache.kafka.connect.file.FileStreamSinkConnector"] == "sink"
    assert by_class["io.debezium.connector.postgresql.PostgresConnector"] == "source"
    assert by_class["io.confluent.connect.s3.S3SinkConnector"] == "sink"
    assert by_class["io.confluent.connect.hdfs3.Hdfs3SinkConnector"] == "sink"
    assert by_class["io.confluent.connect.jdbc.JdbcSinkConnector"] == "sink"
    assert by_class["org.apache.kafka.connect.mirror.MirrorSourceConnector"] == "source"
    assert by_class["org.apache.kafka.connect.mirror.MirrorCheckpointConnector"] == "source"
    assert by_class["org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"] == "source"
    assert by_class["http-poll"] == "source"  # no Java counterpart: its own name
    assert set(by_class.values()) == {"source", "sink"}


def test_connectors_only_false_lists_every_kind_like_connect(client: TestClient) -> None:
    plugins = client.get("/connector-plugins", params={"connectorsOnly": "false"}).json()
    entries = {(p["class"], p["type"]) for p in plugins}
    assert ("org.apache.kafka.connect.transforms.Cast$Key", "transformation") in entries
    assert ("org.apache.kafka.connect.transforms.Cast$Value", "transformation") in entries
    assert ("org.apache.kafka.connect.transforms.Filter", "transformation") in entries
    assert ("io.debezium.transforms.ExtractNewRecordState", "transformation") in entries
    assert (
        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
        "predicate",
    ) in entries
    assert ("org.apache.kafka.connect.json.JsonConverter", "converter") in entries
    assert ("org.apache.kafka.connect.json.JsonConverter", "header_converter") in entries
    assert ("org.apache.kafka.connect.storage.SimpleHeaderConverter", "header_converter") in entries
    assert all(p["version"] for p in plugins)


@pytest.mark.parametrize(
    ("plugin", "key"),
    [
        ("io.debezium.connector.postgresql.PostgresConnector", "database.hostname"),
        ("FileStreamSource", "file"),
        ("org.apache.kafka.connect.transforms.Cast$Value", "spec"),
        ("org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "pattern"),
        ("org.apache.kafka.connect.json.JsonConverter", "schemas.enable"),
    ],
)
def test_each_plugin_describes_its_config_kip_769(
    client: TestClient, plugin: str, key: str
) -> None:
    response = client.get(f"/connector-plugins/{quote(plugin, safe='')}/config")
    assert response.status_code == 200, response.text
    keys = {k["name"]: k for k in response.json()}
    assert key in keys and keys[key]["type"]


def test_an_unknown_plugin_is_404(client: TestClient) -> None:
    response = client.get("/connector-plugins/com.example.Nope/config")
    assert response.status_code == 404
    assert response.json()["error_code"] == 404
