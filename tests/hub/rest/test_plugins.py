"""/connector-plugins against the fake herder."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.hub.rest.fake_herder import SOURCE
from tests.hub.rest.test_connectors import assert_error


def test_list_connector_plugins(client: TestClient) -> None:
    plugins = client.get("/connector-plugins").json()
    assert {p["type"] for p in plugins} == {"source", "sink"}
    assert {"class": SOURCE, "type": "source", "version": "0.1.0"} in plugins


def test_list_all_plugins(client: TestClient) -> None:
    plugins = client.get("/connector-plugins?connectorsOnly=false").json()
    assert {"transformation", "converter"} <= {p["type"] for p in plugins}
    bad = client.get("/connector-plugins?connectorsOnly=perhaps")
    assert_error(bad, 400, fields=("connectorsOnly",))


def test_plugin_config(client: TestClient) -> None:
    keys = client.get("/connector-plugins/FileStreamSource/config").json()
    names = [k["name"] for k in keys]
    assert {"connector.class", "topic", "file"} <= set(names)
    assert {"name", "type", "required", "documentation"} <= set(keys[0])
    assert_error(client.get("/connector-plugins/Nope/config"), 404)


def test_validate_reports_errors_with_200(client: TestClient) -> None:
    response = client.put(
        "/connector-plugins/FileStreamSource/config/validate", json={"file": "/tmp/x"}
    )
    assert response.status_code == 200
    infos = response.json()
    assert infos["name"] == SOURCE and infos["error_count"] == 1
    by_name = {c["value"]["name"]: c["value"] for c in infos["configs"]}
    assert by_name["topic"]["errors"] == ["Missing required configuration"]
    assert by_name["file"] == {
        "name": "file",
        "value": "/tmp/x",
        "recommended_values": [],
        "errors": [],
        "visible": True,
    }


def test_validate_valid_config(client: TestClient) -> None:
    body = {"connector.class": SOURCE, "file": "/tmp/x", "topic": "t"}
    response = client.put("/connector-plugins/FileStreamSource/config/validate", json=body)
    assert response.json()["error_count"] == 0


def test_validate_unknown_plugin_and_bad_body(client: TestClient) -> None:
    assert_error(client.put("/connector-plugins/Nope/config/validate", json={}), 404)
    bad = client.put("/connector-plugins/FileStreamSource/config/validate", json=[1])
    assert_error(bad, 400)
