"""/connectors: every path, status code and body shape, against the fake herder."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.hub.rest.conftest import source_config
from tests.hub.rest.fake_herder import WORKER, FakeHerder


def assert_error(response, status: int, *, fields: tuple[str, ...] = ()) -> dict:  # type: ignore[no-untyped-def]
    body = response.json()
    assert response.status_code == status, body
    assert body["error_code"] == status
    assert isinstance(body["message"], str) and body["message"]
    for field in fields:
        assert field in body["errors"], body
        assert field in body["message"]
    return body


def test_root(client: TestClient) -> None:
    body = client.get("/").json()
    assert set(body) == {"version", "commit", "kafka_cluster_id"}
    assert body["kafka_cluster_id"] == "fake-cluster-id"


def test_create_returns_201_with_info_and_name_in_config(client: TestClient) -> None:
    response = client.post("/connectors", json={"name": "src", "config": source_config()})
    assert response.status_code == 201
    assert response.headers["location"] == "/connectors/src"
    info = response.json()
    assert info["name"] == "src" and info["type"] == "source"
    assert info["config"]["name"] == "src"
    assert info["tasks"] == [{"connector": "src", "task": 0}]


def test_create_coerces_numbers_and_booleans_to_strings(client: TestClient, herder) -> None:  # type: ignore[no-untyped-def]
    config = {**source_config(), "tasks.max": 1, "flag": True}
    assert client.post("/connectors", json={"name": "n", "config": config}).status_code == 201
    stored = herder.connector_config("n")
    assert stored["tasks.max"] == "1" and stored["flag"] == "true"


def test_create_existing_is_409(client: TestClient, created: str) -> None:
    response = client.post("/connectors", json={"name": created, "config": source_config()})
    assert_error(response, 409)


def test_create_invalid_config_is_400_naming_each_field(client: TestClient) -> None:
    config = {"connector.class": source_config()["connector.class"], "tasks.max": "0"}
    body = assert_error(
        client.post("/connectors", json={"name": "bad", "config": config}),
        400,
        fields=("topic", "file", "tasks.max"),
    )
    assert body["errors"]["topic"] == ["Missing required configuration"]


def test_create_missing_connector_class_is_400(client: TestClient) -> None:
    response = client.post("/connectors", json={"name": "x", "config": {"topic": "t"}})
    assert_error(response, 400, fields=("connector.class",))


def test_create_with_mismatched_name_in_config_is_400(client: TestClient) -> None:
    body = {"name": "a", "config": source_config(name="b")}
    assert_error(client.post("/connectors", json=body), 400, fields=("name",))


def test_create_rejects_unaddressable_names(client: TestClient) -> None:
    for name in ("   ", "a/b", "tab\there"):
        body = {"name": name, "config": source_config()}
        assert_error(client.post("/connectors", json=body), 400, fields=("name",))


def test_create_malformed_bodies_are_kafka_shaped_400s(client: TestClient) -> None:
    assert_error(client.post("/connectors", json={"config": {}}), 400, fields=("name",))
    nested = {"name": "n", "config": {"file": {"a": 1}}}
    assert_error(client.post("/connectors", json=nested), 400, fields=("config.file",))
    response = client.post(
        "/connectors", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_error(response, 400)


def test_list_and_expand(client: TestClient, created: str) -> None:
    assert client.get("/connectors").json() == [created]
    status_only = client.get("/connectors?expand=status").json()
    assert list(status_only[created]) == ["status"]
    assert status_only[created]["status"]["connector"]["state"] == "RUNNING"
    both = client.get("/connectors", params=[("expand", "status"), ("expand", "info")]).json()
    assert set(both[created]) == {"status", "info"}
    assert both[created]["info"]["type"] == "source"
    assert client.get("/connectors?expand=nonsense").json() == {created: {}}


def test_get_and_delete(client: TestClient, created: str) -> None:
    assert client.get(f"/connectors/{created}").json()["name"] == created
    response = client.delete(f"/connectors/{created}")
    assert response.status_code == 204 and response.content == b""
    assert_error(client.get(f"/connectors/{created}"), 404)
    assert_error(client.delete(f"/connectors/{created}"), 404)


def test_put_config_creates_then_updates(client: TestClient) -> None:
    first = client.put("/connectors/p/config", json=source_config())
    assert first.status_code == 201 and first.json()["name"] == "p"
    assert first.headers["location"] == "/connectors/p"
    second = client.put("/connectors/p/config", json=source_config(topic="other"))
    assert second.status_code == 200
    assert client.get("/connectors/p/config").json()["topic"] == "other"


def test_put_config_invalid_and_mismatched(client: TestClient) -> None:
    assert_error(client.put("/connectors/p/config", json={"topic": "t"}), 400)
    response = client.put("/connectors/p/config", json=source_config(name="q"))
    assert_error(response, 400, fields=("name",))
    assert_error(client.put("/connectors/p/config", json=["not", "a", "map"]), 400)


def test_patch_config_sets_and_removes_keys(client: TestClient, created: str) -> None:
    response = client.patch(
        f"/connectors/{created}/config", json={"topic": "renamed", "extra": None}
    )
    assert response.status_code == 200
    assert response.json()["config"]["topic"] == "renamed"
    removed = client.patch(f"/connectors/{created}/config", json={"topic": None})
    assert_error(removed, 400, fields=("topic",))
    assert_error(client.patch("/connectors/nope/config", json={"a": "b"}), 404)


def test_status_and_tasks(client: TestClient, created: str) -> None:
    status = client.get(f"/connectors/{created}/status").json()
    assert status["name"] == created and status["type"] == "source"
    assert status["connector"] == {"state": "RUNNING", "worker_id": WORKER}
    assert [t["id"] for t in status["tasks"]] == [0, 1]
    tasks = client.get(f"/connectors/{created}/tasks").json()
    assert tasks[1]["id"] == {"connector": created, "task": 1}
    assert tasks[1]["config"]["topic"] == "lines"
    task = client.get(f"/connectors/{created}/tasks/1/status").json()
    assert task == {"id": 1, "state": "RUNNING", "worker_id": WORKER}
    assert_error(client.get(f"/connectors/{created}/tasks/7/status"), 404)
    assert_error(client.get(f"/connectors/{created}/tasks/x/status"), 400, fields=("task",))
    assert_error(client.get("/connectors/nope/status"), 404)


def test_pause_resume_stop(client: TestClient, created: str) -> None:
    def state() -> str:
        return client.get(f"/connectors/{created}/status").json()["connector"]["state"]

    response = client.put(f"/connectors/{created}/pause")
    assert response.status_code == 202 and response.content == b""
    assert state() == "PAUSED"
    assert client.put(f"/connectors/{created}/resume").status_code == 202
    assert state() == "RUNNING"
    response = client.put(f"/connectors/{created}/stop")
    assert response.status_code == 204 and response.content == b""
    assert state() == "STOPPED"
    for action in ("pause", "resume", "stop"):
        assert_error(client.put(f"/connectors/nope/{action}"), 404)


def test_restart_connector_only_is_204(
    client: TestClient, created: str, herder: FakeHerder
) -> None:
    response = client.post(f"/connectors/{created}/restart")
    assert response.status_code == 204 and response.content == b""
    assert herder.calls[-1] == ("restart_connector", created, False, False)


def test_restart_with_tasks_is_202_with_status(
    client: TestClient, created: str, herder: FakeHerder
) -> None:
    herder.fail_task(created, 1)
    response = client.post(f"/connectors/{created}/restart?includeTasks=true&onlyFailed=true")
    assert response.status_code == 202
    states = {t["id"]: t["state"] for t in response.json()["tasks"]}
    assert states == {0: "RUNNING", 1: "RESTARTING"}
    assert herder.calls[-1] == ("restart_connector", created, True, True)
    bad = client.post(f"/connectors/{created}/restart?includeTasks=maybe")
    assert_error(bad, 400, fields=("includeTasks",))


def test_restart_task(client: TestClient, created: str, herder: FakeHerder) -> None:
    response = client.post(f"/connectors/{created}/tasks/1/restart")
    assert response.status_code == 204
    assert herder.calls[-1] == ("restart_task", created, 1)
    assert_error(client.post(f"/connectors/{created}/tasks/9/restart"), 404)


def test_unknown_path_and_method_are_kafka_shaped(client: TestClient) -> None:
    body = assert_error(client.get("/nowhere"), 404)
    assert body["message"] == "HTTP 404 Not Found"
    assert_error(client.post("/connectors/x/status"), 405)
