"""End to end through a real ``sluice up`` subprocess (tests/fixtures/hub.py) and its REST API,
against a real HTTP API server in the test process.

- http-poll: the incremental cursor survives a kill -9 and restart: nothing lost, nothing
  repeated (equal cursor values included).
- http-poll: a permanently failing endpoint gives a FAILED task whose trace has the status
  code and the body excerpt.
- http-webhook: every request answered 2xx is in the topic after a kill -9 mid-traffic; each
  error status through the real route; records skipped by errors.tolerance=all still let the
  request answer 200, and a conversion failure under the default policy answers 503.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import hub.rest.app
from tests.connectors.http.api_server import ApiServer
from tests.connectors.http.support import api_fixture, read_topic  # noqa: F401
from tests.fixtures.broker import wait_until

PLAIN_JSON = {"key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false"}


@pytest.fixture
def hub(hub_factory: Callable[..., Any]) -> Any:
    return hub_factory(**{"offset.flush.interval.ms": 100, "task.restart.backoff.ms": 500})


def create(hub: Any, name: str, config: dict[str, str]) -> None:
    status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
    assert status == 201, body


def values(hub: Any, topic: str) -> list[Any]:
    return [json.loads(m.value()) for m in read_topic(hub.bootstrap, topic)]


def committed(hub: Any, name: str) -> list[dict[str, Any]]:
    status, body = hub.request("GET", f"/connectors/{name}/offsets")
    return body["offsets"] if status == 200 else []


def stamp(n: int) -> str:
    return f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z"


def test_incremental_cursor_across_kill_9(hub: Any, api: ApiServer) -> None:
    # two records per updated_at value: the boundary rule is exercised at every page edge
    api.items = [{"id": i, "updated_at": stamp(i // 2)} for i in range(40)]
    topic, name = f"api-{uuid.uuid4().hex[:8]}", "api-poll"
    create(hub, name, {
        "connector.class": "http-poll", "topic": topic, "url": f"{api.url}/since",
        "params": '{"since": "${cursor}", "limit": "7"}', "records.pointer": "/data",
        "pagination.type": "cursor", "incremental.field": "updated_at", "key.field": "id",
        "poll.interval.ms": "200", **PLAIN_JSON,
    })  # fmt: skip
    last = {"cursor": stamp(19), "seen": ["38", "39"]}
    wait_until(lambda: [o["offset"] for o in committed(hub, name)] == [last], 60, "the cursor")
    hub.kill()
    # while the hub is down: one more at the committed cursor value, and newer ones
    api.items += [{"id": 100, "updated_at": stamp(19)}]
    api.items += [{"id": i, "updated_at": stamp(i // 2)} for i in range(40, 60)]
    hub.start()
    final = {"cursor": stamp(29), "seen": ["58", "59"]}
    wait_until(lambda: [o["offset"] for o in committed(hub, name)] == [final], 60, "the cursor")
    ids = [v["id"] for v in values(hub, topic)]
    assert sorted(ids) == [*range(60), 100]  # nothing lost, nothing repeated


def test_failing_endpoint_is_a_failed_task_with_status_and_body(hub: Any, api: ApiServer) -> None:
    api.scripts["dead"] = [(500, {}, "database is on fire")]
    create(hub, "dead-api", {
        "connector.class": "http-poll", "topic": "dead", "url": f"{api.url}/script/dead",
        "retry.max.attempts": "2", "retry.backoff.ms": "10",
    })  # fmt: skip

    def failed_trace() -> str:
        status, body = hub.request("GET", "/connectors/dead-api/status")
        tasks = body.get("tasks", []) if status == 200 else []
        return next((t.get("trace", "") for t in tasks if t["state"] == "FAILED"), "")

    trace = wait_until(failed_trace, 30, "the task to fail")
    assert "HTTP 500" in trace and "database is on fire" in trace  # type: ignore[operator]
    assert len(api.requests) < 20  # retried with backoff, restarted with backoff: no tight loop


def post(hub: Any, name: str, body: bytes, **headers: str) -> httpx.Response:
    # no webhook.auth.token on these connectors: the REST API's credential is the fallback
    headers = {**hub.auth_headers, **headers}
    return httpx.post(f"{hub.rest_url}/ingest/{name}", content=body, headers=headers, timeout=30)


def test_webhook_acknowledged_records_survive_kill_9(hub: Any) -> None:
    topic, name = f"hook-{uuid.uuid4().hex[:8]}", "hook"
    create(hub, name, {"connector.class": "http-webhook", "topic": topic, **PLAIN_JSON})
    acked: list[int] = []
    stop = threading.Event()

    def client() -> None:
        n = 0
        with httpx.Client(timeout=30, headers=hub.auth_headers) as http:
            while not stop.is_set():
                batch = range(n, n + 200)
                body = "".join(json.dumps({"id": i, "pad": "x" * 100}) + "\n" for i in batch)
                try:
                    r = http.post(f"{hub.rest_url}/ingest/{name}", content=body,
                                  headers={"Content-Type": "application/x-ndjson"})  # fmt: skip
                except httpx.HTTPError:
                    return  # the hub died under the request: not acknowledged
                if r.status_code == 200:
                    assert r.json() == {"accepted": 200}
                    acked.extend(batch)
                n += 200

    wait_until(lambda: post(hub, name, b"{}").status_code == 200, 30, "the webhook task")
    thread = threading.Thread(target=client)
    thread.start()
    wait_until(lambda: len(acked) >= 4000, 60, "acknowledged records")
    hub.kill()  # while the client is posting
    stop.set()
    thread.join(30)
    hub.start()
    stored = {v["id"] for v in values(hub, topic) if "id" in v}
    missing = set(acked) - stored
    assert not missing, f"{len(missing)} acknowledged records lost"


def test_webhook_error_statuses(hub: Any) -> None:
    topic = f"hook-{uuid.uuid4().hex[:8]}"
    create(hub, "secure", {"connector.class": "http-webhook", "topic": topic,
                           "webhook.auth.token": "tok", "webhook.max.body.bytes": "100",
                           **PLAIN_JSON})  # fmt: skip
    ok = {"Authorization": "Bearer tok"}
    wait_until(lambda: post(hub, "secure", b"{}", **ok).status_code == 200, 30, "the task")
    assert post(hub, "nobody", b"{}").status_code == 404
    assert post(hub, "secure", b"{}").status_code == 401
    bad = post(hub, "secure", b'{"a":', **ok)
    assert bad.status_code == 400 and "not JSON" in bad.json()["message"]
    assert post(hub, "secure", b"[" + b"1," * 100 + b"1]", **ok).status_code == 413
    assert hub.request("PUT", "/connectors/secure/pause")[0] == 202
    paused = wait_until(
        lambda: (r := post(hub, "secure", b"{}", **ok)).status_code == 503 and r, 30, "503"
    )
    assert paused.headers["Retry-After"]  # type: ignore[union-attr]
    assert hub.request("PUT", "/connectors/secure/resume")[0] == 202
    wait_until(lambda: post(hub, "secure", b"[1, 2]", **ok).status_code == 200, 30, "resumed")
    assert values(hub, topic)[-2:] == [1, 2]


def test_webhook_records_skipped_by_the_error_policy(hub: Any) -> None:
    """ByteArrayConverter refuses a JSON object (a null value passes): under
    errors.tolerance=all the object is skipped and the request is still answered 200; under
    the default policy the task fails and the request gets 503, never a 200."""
    refuse_objects = {"connector.class": "http-webhook", "value.converter": "ByteArrayConverter"}
    create(hub, "tolerant", {**refuse_objects, "topic": "tolerant", "errors.tolerance": "all"})
    create(hub, "strict", {**refuse_objects, "topic": "strict"})
    for name in ("tolerant", "strict"):
        wait_until(lambda n=name: post(hub, n, b"null").status_code == 200, 30, f"task {name}")
    skipped = post(hub, "tolerant", b'[null, {"a": 1}, null]')
    assert (skipped.status_code, skipped.json()) == (200, {"accepted": 3})
    assert len(read_topic(hub.bootstrap, "tolerant")) == 3  # the probe and two nulls
    failed = post(hub, "strict", b'[null, {"a": 1}]')
    assert failed.status_code == 503 and failed.headers["Retry-After"]


def test_scrape_through_the_hub(hub: Any, api: ApiServer) -> None:
    api.metrics = '# TYPE temp gauge\ntemp{room="a"} 21.5\ntemp{room="b"} 19\n'
    topic = f"metrics-{uuid.uuid4().hex[:8]}"
    create(hub, "scrape", {"connector.class": "http-scrape", "topic": topic,
                           "targets": f"{api.url}/metrics", "job": "test",
                           "scrape.interval.ms": "200", **PLAIN_JSON})  # fmt: skip
    wait_until(lambda: len(values(hub, topic)) >= 6, 30, "two scrapes")
    first = values(hub, topic)[:3]
    port = api.url.rsplit(":", 1)[1]
    tags = {"instance": f"127.0.0.1:{port}", "job": "test"}
    assert [(v["name"], v["tags"], v["value"], v["type"]) for v in first] == [
        ("temp", {**tags, "room": "a"}, 21.5, "gauge"),
        ("temp", {**tags, "room": "b"}, 19.0, "gauge"),
        ("up", tags, 1.0, "gauge"),
    ]
    assert all(v["target"] == f"{api.url}/metrics" and v["time"].endswith("Z") for v in first)
