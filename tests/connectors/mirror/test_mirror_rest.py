"""The REST recipe of docs/connectors/mirror.md: the three connectors POSTed to a normal hub
(``sluice up``, whose broker is the target) under Kafka's class names, mirroring from A."""

from __future__ import annotations

import json
from pathlib import Path

from tests.connectors.mirror.conftest import (
    Names,
    counts,
    create_topic,
    produce,
    read_all,
    wait_for_counts,
)
from tests.fixtures.broker import BrokerProcess, wait_until
from tests.fixtures.hub import HubProcess

DOCS = Path(__file__).resolve().parents[3] / "docs" / "connectors" / "mirror.md"


def recipe() -> list[dict]:
    """The connector JSON bodies of the recipe, as the docs show them."""
    text = DOCS.read_text()
    start = text.index("<!-- rest-recipe -->")
    bodies = []
    for block in text[start:].split("```json")[1:4]:
        bodies.append(json.loads(block.split("```")[0]))
    return bodies


def test_rest_recipe_mirrors_into_a_hub(
    cluster_a: BrokerProcess, hub: HubProcess, names: Names
) -> None:
    topic = f"{names.prefix}-orders"
    create_topic(cluster_a, topic, 2)
    produce(cluster_a, topic, 2, 0, 100)
    status, plugins = hub.request("GET", "/connector-plugins")
    assert status == 200
    mirror = "org.apache.kafka.connect.mirror."
    assert {f"{mirror}MirrorSourceConnector", f"{mirror}MirrorCheckpointConnector",
            f"{mirror}MirrorHeartbeatConnector"} <= {p["class"] for p in plugins}  # fmt: skip

    swap = {"us-west": names.source, "us-east": names.target,
            "us-west-host1:9092": cluster_a.bootstrap, "us-east-host1:9092": hub.bootstrap,
            "orders": topic}  # fmt: skip
    for body in recipe():
        config = {k: swap.get(v, v) for k, v in body["config"].items()}
        config.update({"refresh.topics.interval.seconds": "1", "emit.checkpoints.interval.seconds":
                       "1", "replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
                       "checkpoints.topic.replication.factor": "1",
                       "heartbeats.topic.replication.factor": "1"})  # fmt: skip
        status, answer = hub.request(
            "POST", "/connectors", {"name": body["name"], "config": config}
        )
        assert status == 201, answer

    remote = names.remote(topic)
    wait_for_counts(hub, remote, {0: 100, 1: 100})
    assert read_all(hub, remote) == read_all(cluster_a, topic)
    wait_until(lambda: counts(hub, "heartbeats").get(0, 0) > 0, 30, "heartbeats")
    for body in recipe():
        status, state = hub.request("GET", f"/connectors/{body['name']}/status")
        assert state["connector"]["state"] == "RUNNING", state


def test_validation_names_unsupported_keys(hub: HubProcess) -> None:
    status, answer = hub.request(
        "PUT", "/connector-plugins/MirrorSourceConnector/config/validate",
        {"connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
         "name": "m", "source.cluster.alias": "A", "metric.reporters": "com.example.R"},
    )  # fmt: skip
    assert status == 200
    errors = {c["value"]["name"]: c["value"]["errors"] for c in answer["configs"]
              if c["value"]["errors"]}  # fmt: skip
    assert set(errors) >= {"metric.reporters", "key.converter", "value.converter",
                           "header.converter"}  # fmt: skip
