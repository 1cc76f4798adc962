"""/connectors/{name}/offsets and /topics against the fake herder."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.hub.rest.test_connectors import assert_error

OFFSET = {"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": 42}}


def test_get_offsets(client: TestClient, created: str) -> None:
    assert client.get(f"/connectors/{created}/offsets").json() == {"offsets": []}
    assert_error(client.get("/connectors/nope/offsets"), 404)


def test_alter_requires_stopped_then_succeeds(client: TestClient, created: str) -> None:
    running = client.patch(f"/connectors/{created}/offsets", json={"offsets": [OFFSET]})
    body = assert_error(running, 409)
    assert "STOPPED" in body["message"]
    client.put(f"/connectors/{created}/stop")
    altered = client.patch(f"/connectors/{created}/offsets", json={"offsets": [OFFSET]})
    assert altered.status_code == 200 and "altered" in altered.json()["message"]
    assert client.get(f"/connectors/{created}/offsets").json() == {"offsets": [OFFSET]}
    removal = {"offsets": [{"partition": OFFSET["partition"], "offset": None}]}
    assert client.patch(f"/connectors/{created}/offsets", json=removal).status_code == 200
    assert client.get(f"/connectors/{created}/offsets").json() == {"offsets": []}


def test_alter_rejects_malformed_bodies(client: TestClient, created: str) -> None:
    url = f"/connectors/{created}/offsets"
    assert_error(client.patch(url, json={"offsets": []}), 400, fields=("offsets",))
    assert_error(client.patch(url, json={}), 400, fields=("offsets",))
    bad = {"offsets": [{"partition": "p", "offset": {}}]}
    assert_error(client.patch(url, json=bad), 400, fields=("offsets.0.partition",))


def test_reset_offsets(client: TestClient, created: str) -> None:
    assert_error(client.delete(f"/connectors/{created}/offsets"), 409)
    client.put(f"/connectors/{created}/stop")
    client.patch(f"/connectors/{created}/offsets", json={"offsets": [OFFSET]})
    response = client.delete(f"/connectors/{created}/offsets")
    assert response.status_code == 200 and "reset" in response.json()["message"]
    assert client.get(f"/connectors/{created}/offsets").json() == {"offsets": []}


def test_topics_and_reset(client: TestClient, created: str) -> None:
    assert client.get(f"/connectors/{created}/topics").json() == {created: {"topics": ["lines"]}}
    response = client.put(f"/connectors/{created}/topics/reset")
    assert response.status_code == 202 and response.content == b""
    assert client.get(f"/connectors/{created}/topics").json() == {created: {"topics": []}}
    assert_error(client.get("/connectors/nope/topics"), 404)
    assert_error(client.put("/connectors/nope/topics/reset"), 404)
