"""The REST app over the real Herder, against a real broker (the session ``broker`` fixture).

Integration counterpart of the fake-herder tests: the same paths and payloads, answered by the
runtime with topic-backed stores and the built-in file connectors, including Kafka Connect's
quickstart config with its Java class name.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import hub.runtime.herder  # noqa: F401  (a broken import must fail the suite, not skip it)
from tests.fixtures.broker import BrokerProcess, wait_until
from tests.hub.rest.conftest import real_herder_client

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


@pytest.fixture
def api(broker: BrokerProcess) -> Iterator[TestClient]:
    with real_herder_client(broker.bootstrap, "rest") as client:
        yield client


def quickstart(path: Path, topic: str) -> dict[str, Any]:
    return {"connector.class": SOURCE, "tasks.max": "1", "file": str(path), "topic": topic}


def state(api: TestClient, name: str) -> str:
    return str(api.get(f"/connectors/{name}/status").json()["connector"]["state"])


def test_connector_lifecycle_and_offsets(api: TestClient, tmp_path: Path) -> None:
    assert api.get("/").json()["kafka_cluster_id"]
    source = tmp_path / "in.txt"
    source.write_text("one\ntwo\n")
    topic = f"rest-lines-{uuid.uuid4().hex[:8]}"
    body = {"name": "quickstart", "config": quickstart(source, topic)}

    created = api.post("/connectors", json=body)
    assert created.status_code == 201, created.text
    assert created.json()["type"] == "source"
    assert api.post("/connectors", json=body).status_code == 409
    wait_until(lambda: state(api, "quickstart") == "RUNNING", 20, "connector RUNNING")
    assert api.get("/connectors?expand=status").json()["quickstart"]["status"]["tasks"]

    entry = {"partition": {"filename": str(source)}, "offset": {"position": 0}}
    assert api.patch("/connectors/quickstart/offsets", json={"offsets": [entry]}).status_code == 409
    assert api.put("/connectors/quickstart/stop").status_code == 204
    wait_until(lambda: state(api, "quickstart") == "STOPPED", 20, "connector STOPPED")
    offsets = wait_until(
        lambda: api.get("/connectors/quickstart/offsets").json()["offsets"], 20, "offsets"
    )
    assert offsets[0]["partition"] == {"filename": str(source)}
    altered = api.patch("/connectors/quickstart/offsets", json={"offsets": [entry]})
    assert altered.status_code == 200, altered.text
    assert api.delete("/connectors/quickstart/offsets").status_code == 200
    assert api.get("/connectors/quickstart/offsets").json() == {"offsets": []}
    assert api.get("/connectors/quickstart/topics").json() == {"quickstart": {"topics": [topic]}}

    assert api.delete("/connectors/quickstart").status_code == 204
    assert api.get("/connectors/quickstart").json()["error_code"] == 404


def test_initial_state_stopped_then_offsets_then_resume(api: TestClient, tmp_path: Path) -> None:
    """KIP-980: created STOPPED, a connector has no tasks and its offsets can be set before it
    ever runs; resumed, it starts from them. PAUSED creates paused tasks; RUNNING is the
    default; anything else is a 400."""
    source = tmp_path / "in.txt"
    source.write_text("skipped\nread\n")
    topic = f"rest-initial-{uuid.uuid4().hex[:8]}"
    body = {"name": "later", "config": quickstart(source, topic), "initial_state": "STOPPED"}
    assert api.post("/connectors", json=body).status_code == 201
    wait_until(lambda: state(api, "later") == "STOPPED", 20, "connector STOPPED")
    assert api.get("/connectors/later/status").json()["tasks"] == []
    entry = {"partition": {"filename": str(source)}, "offset": {"position": len("skipped\n")}}
    altered = api.patch("/connectors/later/offsets", json={"offsets": [entry]})
    assert altered.status_code == 200, altered.text
    assert api.put("/connectors/later/resume").status_code == 202
    wait_until(lambda: state(api, "later") == "RUNNING", 20, "connector RUNNING")
    offsets = wait_until(
        lambda: [
            o for o in api.get("/connectors/later/offsets").json()["offsets"]
            if o["offset"].get("position", 0) > len("skipped\n")
        ],
        20,
        "the source read past the offset it was given",
    )  # fmt: skip
    assert offsets[0]["offset"]["position"] == len("skipped\nread\n")

    paused = {"name": "paused", "config": quickstart(source, topic), "initial_state": "PAUSED"}
    assert api.post("/connectors", json=paused).status_code == 201
    wait_until(lambda: state(api, "paused") == "PAUSED", 20, "connector PAUSED")
    bad = {"name": "bad", "config": quickstart(source, topic), "initial_state": "SLEEPING"}
    response = api.post("/connectors", json=bad)
    assert response.status_code == 400 and "initial_state" in response.text
    assert api.get("/connectors/bad").status_code == 404


def test_invalid_config_names_fields(api: TestClient) -> None:
    response = api.post("/connectors", json={"name": "bad", "config": {"connector.class": SOURCE}})
    assert response.status_code == 400
    assert {"topic", "file"} <= set(response.json()["errors"])
    unknown = api.post("/connectors", json={"name": "x", "config": {"connector.class": "Nope"}})
    assert unknown.status_code == 400 and "connector.class" in unknown.json()["errors"]


def test_plugins_and_validate(api: TestClient) -> None:
    types = {p["type"] for p in api.get("/connector-plugins").json()}
    assert {"source", "sink"} <= types
    everything = api.get("/connector-plugins?connectorsOnly=false").json()
    assert "transformation" in {p["type"] for p in everything}
    keys = api.get("/connector-plugins/FileStreamSource/config").json()
    assert "topic" in {k["name"] for k in keys}
    infos = api.put("/connector-plugins/FileStreamSource/config/validate", json={}).json()
    assert infos["error_count"] > 0
    assert api.get("/connector-plugins/Nope/config").status_code == 404
