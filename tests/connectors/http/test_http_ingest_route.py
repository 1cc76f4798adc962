"""``POST /ingest/{connector}`` (hub/rest/ingest.py + hub/runtime/ingest.py) in-process: the real
REST app around a stand-in herder/worker holding a real WebhookSourceTask (acknowledged by the
test playing the worker), so routing, limits and the REST-auth fallback are checked fast."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from connectors.http.webhook import WebhookSourceTask
from hub.rest.app import create_app
from hub.runtime.config import WorkerConfig
from tests.connectors.http.support import Context
from tests.fixtures.rest_auth import OPEN, anonymous


class Slot:
    """What hub.runtime.ingest reads of a WorkerSourceTask."""

    def __init__(self, task: Any) -> None:
        self.task = task
        self.failed = False
        self.paused = False
        self.stopping = threading.Event()


class Worker:
    def __init__(self) -> None:
        self.slots: dict[str, Slot] = {}

    def task_ids(self, name: str) -> list[str]:
        return [name] if name in self.slots else []

    def task(self, id: str) -> Slot | None:
        return self.slots.get(id)


class Herder:
    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.worker = Worker()

    def connectors(self) -> list[str]:
        return [*self.worker.slots, "other"]


def acking(task: WebhookSourceTask, stop: threading.Event) -> None:
    """The worker's part: poll, then report the whole poll result safe."""
    while not stop.is_set():
        if records := task.poll():
            task.commit_records(records)


@pytest.fixture
def setup(request: pytest.FixtureRequest) -> Any:
    # the loopback opt-out unless a test asks for REST credentials
    settings = {"bootstrap.servers": "127.0.0.1:9", **getattr(request, "param", OPEN)}
    herder = Herder(WorkerConfig.from_mapping(settings))
    stop = threading.Event()
    threads = []
    tasks: list[WebhookSourceTask] = []

    def add(name: str, **config: str) -> Slot:
        cfg = {"name": name, "topic": "t", **config}
        task = WebhookSourceTask(Context(cfg))
        task.start(cfg)
        tasks.append(task)
        thread = threading.Thread(target=acking, args=(task, stop), daemon=True)
        thread.start()
        threads.append(thread)
        slot = herder.worker.slots[name] = Slot(task)
        return slot

    client = anonymous(create_app(herder, herder.config))
    yield client, add
    stop.set()
    for task in tasks:
        task.stop()
    for thread in threads:
        thread.join(5)


def test_routes_and_statuses(setup: Any) -> None:
    client, add = setup
    slot = add("hook", **{"webhook.max.body.bytes": "50"})
    ok = client.post("/ingest/hook", content=b'[{"a": 1}, {"a": 2}]')
    assert (ok.status_code, ok.json()) == (200, {"accepted": 2})
    missing = client.post("/ingest/nobody", content=b"{}")
    assert missing.status_code == 404 and missing.json()["error_code"] == 404
    assert client.post("/ingest/other", content=b"{}").status_code == 503  # no running task
    assert client.post("/ingest/hook", content=b"[" + b"1," * 40 + b"1]").status_code == 413
    slot.paused = True
    paused = client.post("/ingest/hook", content=b"{}")
    assert paused.status_code == 503 and paused.headers["Retry-After"]
    slot.paused, slot.task = False, object()  # a source task that takes no webhooks
    assert client.post("/ingest/hook", content=b"{}").status_code == 404


class BlockingTarget:
    """An ingest target with only the blocking ``ingest``: called in the thread pool."""

    max_body_bytes = 100
    authenticates = False
    config = "started"

    def ingest(self, body: bytes, headers: dict[str, str]) -> Any:
        return 202, {"thread": threading.current_thread().name, "body": body.decode()}, {}


def test_a_target_without_ingest_async_is_called_on_a_pool_thread(setup: Any) -> None:
    client, add = setup
    add("hook").task = BlockingTarget()
    answer = client.post("/ingest/hook", content=b"[1]")
    assert answer.status_code == 202 and answer.json()["body"] == "[1]"
    assert answer.json()["thread"] == "AnyIO worker thread"  # not the event loop's


@pytest.mark.parametrize("setup", [{"rest.auth.token": "admin"}], indirect=True)
def test_rest_credentials_guard_a_webhook_without_its_own_auth(setup: Any) -> None:
    client, add = setup
    add("open")
    add("own", **{"webhook.auth.token": "hook"})
    assert client.post("/ingest/open", content=b"{}").status_code == 401
    admin = {"Authorization": "Bearer admin"}
    assert client.post("/ingest/open", content=b"{}", headers=admin).status_code == 200
    own = {"Authorization": "Bearer hook"}
    assert client.post("/ingest/own", content=b"{}", headers=own).status_code == 200
    assert client.post("/ingest/own", content=b"{}", headers=admin).status_code == 401
    # the console's session cookie is no credential for webhooks
    assert client.post("/console/login", json={"token": "admin"}).status_code == 204
    assert client.post("/ingest/open", content=b"{}").status_code == 401
    # webhook senders are servers: no Origin rules, but the Host allow-list applies
    assert (
        client.post(
            "/ingest/own", content=b"{}", headers={**own, "Origin": "https://x.example"}
        ).status_code
        == 200
    )
    spoofed = {**own, "Host": "attacker.example"}
    assert client.post("/ingest/own", content=b"{}", headers=spoofed).status_code == 421
