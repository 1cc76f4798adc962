"""``/console/api`` against a real broker: topics, messages, groups, rates, auth, static files."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, TopicPartition
from fastapi.testclient import TestClient

from hub.runtime.config import WorkerConfig
from kafka_admin import KafkaAdmin
from tests.fixtures.broker import BrokerProcess
from tests.ui.conftest import console_client, now_ms, produce
from ui.rates import RateSampler


def _topic(api: TestClient, partitions: int = 1, **configs: str) -> str:
    name = f"console-{uuid.uuid4().hex[:8]}"
    resp = api.post(
        "/console/api/topics", json={"name": name, "partitions": partitions, "configs": configs}
    )
    assert resp.status_code == 201, resp.text
    return name


def _commit(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commits offsets without joining (assign, not subscribe): the group stays Empty."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    parts = [TopicPartition(topic, p, o) for p, o in offsets.items()]
    consumer.commit(offsets=parts, asynchronous=False)
    consumer.close()


def test_overview_counts_the_cluster(api: TestClient) -> None:
    _topic(api, partitions=3)
    body = api.get("/console/api/overview").json()
    assert len(body["brokers"]) == 1
    assert body["topics"] >= 1 and body["partitions"] >= 3
    assert body["size_bytes"] is not None
    assert body["rates"]["series"] == [] or "in" in body["rates"]["series"][0]


def test_create_describe_alter_delete_topic(api: TestClient) -> None:
    name = _topic(api, partitions=2, **{"retention.ms": "3600000"})
    assert api.post("/console/api/topics", json={"name": name}).status_code == 409
    row = next(t for t in api.get("/console/api/topics").json() if t["name"] == name)
    assert row["partitions"] == 2 and row["retention.ms"] == "3600000" and not row["internal"]
    parts = api.get(f"/console/api/topics/{name}/partitions").json()
    assert [p["partition"] for p in parts] == [0, 1]
    assert all(p["leader"] == 1 and p["end_offset"] == 0 for p in parts)

    resp = api.patch(f"/console/api/topics/{name}/configs", json={"cleanup.policy": "compact"})
    assert resp.status_code == 200, resp.text
    configs = resp.json()["configs"]
    assert configs["cleanup.policy"]["value"] == "compact"
    assert not configs["cleanup.policy"]["is_default"]
    resp = api.patch(f"/console/api/topics/{name}/configs", json={"retention.ms": None})
    assert resp.json()["configs"]["retention.ms"]["is_default"]

    assert api.delete(f"/console/api/topics/{name}").status_code == 204
    assert api.get(f"/console/api/topics/{name}").status_code == 404


def test_create_topic_needs_a_name(api: TestClient) -> None:
    resp = api.post("/console/api/topics", json={"partitions": 1})
    assert resp.status_code == 400
    assert resp.json()["errors"] == {"name": ["required"]}


def test_produce_then_browse_every_way(api: TestClient) -> None:
    name = _topic(api, partitions=2)
    for i in range(6):
        body = {"key": f"k{i}", "value": f'{{"n": {i}}}', "headers": {"h": "v"}, "partition": i % 2}
        resp = api.post(f"/console/api/topics/{name}/messages", json=body)
        assert resp.status_code == 201, resp.text
        assert resp.json()["partition"] == i % 2
    url = f"/console/api/topics/{name}/messages"

    earliest = api.get(url, params={"start": "earliest"}).json()
    assert sorted(r["value"] for r in earliest["records"]) == [f'{{"n": {i}}}' for i in range(6)]
    first = earliest["records"][0]
    assert first["headers"] == [["h", "v"]] and first["key_encoding"] == "text"
    assert earliest["next"] == {"0": 3, "1": 3}

    latest = api.get(url, params={"start": "latest", "limit": 1}).json()
    assert [r["key"] for r in latest["records"]] == ["k5"]  # the newest of all partitions
    assert latest["order"] == "newest_first" and latest["next"] == {"0": 3, "1": 3}
    newest = api.get(url, params={"start": "latest", "limit": 4}).json()["records"]
    assert [r["key"] for r in newest] == ["k5", "k4", "k3", "k2"]
    one = api.get(url, params={"start": "offset", "offset": 2, "partition": 1}).json()
    assert [(r["partition"], r["offset"]) for r in one["records"]] == [(1, 2)]
    filtered = api.get(url, params={"start": "earliest", "q": '"N": 4'}).json()
    assert [r["key"] for r in filtered["records"]] == ["k4"]

    tail = api.get(url, params={"start": "positions", "positions": "0:3,1:3"}).json()
    assert tail["records"] == []
    api.post(url, json={"value": "later", "partition": 0})
    tail = api.get(url, params={"start": "positions", "positions": "0:3,1:3"}).json()
    assert [r["value"] for r in tail["records"]] == ["later"]


def test_browse_from_a_timestamp(api: TestClient, broker: BrokerProcess) -> None:
    name = _topic(api)
    now = now_ms()
    stamps = [now - 3 * 3600_000, now - 2 * 3600_000, now - 3600_000]
    produce(broker.bootstrap, name, ["old", "mid", "new"], timestamps=stamps)
    url = f"/console/api/topics/{name}/messages"
    body = api.get(url, params={"start": "timestamp", "timestamp": now - 150 * 60_000}).json()
    assert [r["value"] for r in body["records"]] == ["mid", "new"]
    assert [r["timestamp"] for r in body["records"]] == stamps[1:]
    future = api.get(url, params={"start": "timestamp", "timestamp": now + 3600_000}).json()
    assert future["records"] == []


def test_browse_errors(api: TestClient) -> None:
    name = _topic(api)
    assert api.get("/console/api/topics/no-such-topic-x/messages").status_code == 404
    bad = api.get(f"/console/api/topics/{name}/messages", params={"start": "sideways"})
    assert bad.status_code == 400 and "sideways" in bad.json()["message"]
    assert (
        api.get(f"/console/api/topics/{name}/messages", params={"partition": 7}).status_code == 404
    )
    no_offset = api.get(f"/console/api/topics/{name}/messages", params={"start": "offset"})
    assert no_offset.status_code == 400


def test_groups_lag_and_reset(api: TestClient, broker: BrokerProcess) -> None:
    name = _topic(api, partitions=2)
    produce(broker.bootstrap, name, [f"m{i}" for i in range(4)], partition=0)
    produce(broker.bootstrap, name, [f"m{i}" for i in range(2)], partition=1)
    group = f"billing-{uuid.uuid4().hex[:6]}"
    _commit(broker.bootstrap, group, name, {0: 1, 1: 2})

    row = next(g for g in api.get("/console/api/groups").json() if g["group_id"] == group)
    assert row["topics"] == [name] and row["lag"] == 3 and row["members"] == 0
    detail = api.get(f"/console/api/groups/{group}").json()
    assert [(o["partition"], o["committed"], o["lag"]) for o in detail["offsets"]] == [
        (0, 1, 3),
        (1, 2, 0),
    ]

    url = f"/console/api/groups/{group}/reset-offsets"
    plan = api.post(url, json={"to": "earliest"}).json()["offsets"]
    assert [(o["partition"], o["offset"], o["committed"], o["lag_after"]) for o in plan] == [
        (0, 0, 1, 4),
        (1, 0, 2, 2),
    ]
    assert api.get(f"/console/api/groups/{group}").json()["offsets"][0]["lag"] == 4
    api.post(url, json={"to": "offset", "offset": 3, "topic": name})
    offsets = [o["committed"] for o in api.get(f"/console/api/groups/{group}").json()["offsets"]]
    assert offsets == [3, 2]  # clamped to partition 1's end
    api.post(url, json={"to": "latest"})
    assert all(o["lag"] == 0 for o in api.get(f"/console/api/groups/{group}").json()["offsets"])
    assert api.post(url, json={"to": "nowhere"}).status_code == 400
    assert api.post(url, json={"to": "offset"}).status_code == 400


def test_reset_refuses_a_group_with_members(api: TestClient, broker: BrokerProcess) -> None:
    name = _topic(api)
    group = f"live-{uuid.uuid4().hex[:6]}"
    consumer = Consumer({
        "bootstrap.servers": broker.bootstrap, "group.id": group, "session.timeout.ms": 6000,
    })  # fmt: skip
    consumer.subscribe([name])
    try:
        for _ in range(60):
            consumer.poll(0.2)
            if consumer.assignment():
                break
        assert consumer.assignment(), "consumer never joined"
        resp = api.post(f"/console/api/groups/{group}/reset-offsets", json={"to": "earliest"})
        assert resp.status_code == 409
        assert "stop its consumers" in resp.json()["message"]
        assert api.get(f"/console/api/groups/{group}").json()["members"]
    finally:
        consumer.close()


def test_rates_follow_produced_and_committed_messages(broker: BrokerProcess) -> None:
    config = WorkerConfig.from_mapping({"bootstrap.servers": broker.bootstrap})
    admin = KafkaAdmin(config.client_config("admin"))
    sampler = RateSampler(admin, interval=1.0)
    sampler.sample()
    topic = f"rates-{uuid.uuid4().hex[:6]}"
    admin.create_topic(topic, 1, 1, {})
    produce(broker.bootstrap, topic, ["a"] * 10)
    _commit(broker.bootstrap, f"g-{topic}", topic, {0: 4})
    sampler.sample()
    [point] = sampler.series()
    assert point["in"] > 0 and point["out"] > 0
    assert sampler.topic_rates()[topic] > 0


def test_console_api_uses_the_rest_credentials(broker: BrokerProcess) -> None:
    with console_client(broker, **{"rest.auth.token": "s3cret"}) as client:
        assert client.get("/console/api/overview").status_code == 401
        ok = client.get("/console/api/overview", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert client.get("/ui/").status_code == 200  # pages are public; data is not


def test_static_files(api: TestClient) -> None:
    resp = api.get("/ui", follow_redirects=False)
    assert resp.status_code in (302, 307) and resp.headers["location"] == "/ui/"
    index = api.get("/ui/")
    assert index.status_code == 200 and 'src="app.js"' in index.text
    script = api.get("/ui/pages/topics.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert api.get("/ui/../pyproject.toml").status_code == 404
    assert api.get("/ui/%2e%2e/%2e%2e/pyproject.toml").status_code == 404
    assert api.get("/ui/missing.js").status_code == 404


def test_console_routes_stay_out_of_the_openapi_document(api: TestClient) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith(("/console", "/ui"))]


def test_rate_sampler_thread_starts_on_use_and_stops(broker: BrokerProcess) -> None:
    config = WorkerConfig.from_mapping({"bootstrap.servers": broker.bootstrap})
    sampler = RateSampler(KafkaAdmin(config.client_config("admin")), interval=0.05)
    sampler.touch()
    thread = sampler._thread
    assert thread is not None and thread.is_alive()
    sampler.stop()
    thread.join(timeout=15)
    assert not thread.is_alive()
    sampler.touch()  # a stopped sampler stays stopped
    assert sampler._thread is thread


def test_sizes_unknown_when_the_cluster_will_not_say(broker: BrokerProcess) -> None:
    admin = KafkaAdmin({"bootstrap.servers": broker.bootstrap})
    admin._sizes_client = object()  # no describe_log_dirs: behaves like a refusing cluster
    assert admin.sizes() is None
    assert admin.overview()["size_bytes"] is None
