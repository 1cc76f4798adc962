"""Searching and browsing beyond one page, record shapes, purge and partitions, groups with
uncommitted partitions, the cluster view: ``/console/api`` against a real broker."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from fastapi.testclient import TestClient

from tests.fixtures.broker import BrokerProcess

CUSTOMERS = 200
PER_CUSTOMER = 15


def _topic(api: TestClient, partitions: int = 1) -> str:
    name = f"search-{uuid.uuid4().hex[:8]}"
    resp = api.post("/console/api/topics", json={"name": name, "partitions": partitions})
    assert resp.status_code == 201, resp.text
    return name


@pytest.fixture(scope="module")
def big_topic(broker: BrokerProcess) -> str:
    """3,000 orders in 3 partitions: 15 per customer, keyed, with headers, some Connect-wrapped."""
    from tests.ui.conftest import console_client

    with console_client(broker) as api:
        name = _topic(api, partitions=3)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20})
    for i in range(CUSTOMERS * PER_CUSTOMER):
        customer = f"cust-{i % CUSTOMERS:04d}"
        order = {"id": i, "customer": {"id": customer}, "amount": i % 97}
        value = {"schema": {"type": "struct"}, "payload": order} if i % 10 == 0 else order
        producer.produce(
            name, key=customer, value=json.dumps(value), partition=i % 3,
            headers=[("source", b"web" if i % 2 else b"mobile")],
        )  # fmt: skip
    assert producer.flush(30) == 0
    return name


def _pages(api: TestClient, topic: str, **params: Any) -> list[dict[str, Any]]:
    url = f"/console/api/topics/{topic}/messages"
    pages = [api.get(url, params=params).json()]
    while pages[-1]["cursor"]:
        assert not pages[-1]["progress"]["done"]
        pages.append(api.get(url, params={**params, "cursor": pages[-1]["cursor"]}).json())
        assert len(pages) < 50, "the search does not advance"
    return pages


@pytest.mark.parametrize("start", ["earliest", "latest"])
def test_search_pages_through_a_topic_larger_than_its_scan_window(
    api: TestClient, big_topic: str, start: str
) -> None:
    """A window of 500 records finds all 15 orders of one customer in 3,000, page by page,
    saying how far it got; it never repeats or skips one."""
    pages = _pages(api, big_topic, start=start, key="cust-0042", scan=500, limit=50)
    assert len(pages) >= 6  # 3,000 / 500
    first = pages[0]["progress"]
    assert first == {"searched": 500, "total": 3000, "done": False}
    assert pages[-1]["progress"] == {"searched": 3000, "total": 3000, "done": True}
    searched = [p["progress"]["searched"] for p in pages]
    assert searched == sorted(searched)
    found = [(r["partition"], r["offset"]) for p in pages for r in p["records"]]
    assert len(found) == len(set(found)) == PER_CUSTOMER
    assert all(r["key"] == "cust-0042" for p in pages for r in p["records"])
    if start == "latest":  # newest first within and across pages
        stamps = [(r["timestamp"], r["offset"]) for p in pages for r in p["records"]]
        assert [t for t, _ in stamps] == sorted((t for t, _ in stamps), reverse=True)


def test_search_stops_at_the_limit_and_continues_exactly(api: TestClient, big_topic: str) -> None:
    pages = _pages(api, big_topic, start="earliest", value="cust-000", limit=40)
    found = [(r["partition"], r["offset"]) for p in pages for r in p["records"]]
    assert all(len(p["records"]) <= 40 for p in pages)
    assert len(found) == len(set(found)) == 10 * PER_CUSTOMER  # cust-0000 .. cust-0009


def test_filters_by_header_json_path_and_connect_wrapper(api: TestClient, big_topic: str) -> None:
    url = f"/console/api/topics/{big_topic}/messages"
    params = {"start": "earliest", "limit": 1000, "scan": 5000}
    by_path = api.get(url, params={**params, "json_path": "customer.id == 'cust-0007'"}).json()
    assert len(by_path["records"]) == PER_CUSTOMER  # wrapped ones match on their payload
    assert by_path["progress"]["done"]
    assert by_path["filter"] == "JSON path \"customer.id == 'cust-0007'\""
    dollar = api.get(url, params={**params, "json_path": "$.amount", "key": "cust-0007"}).json()
    assert all(json.loads(r["value"]).get("amount", 1) != 0 for r in dollar["records"])
    header = api.get(url, params={**params, "header": "source=web", "key": "cust-0001"}).json()
    assert len(header["records"]) == PER_CUSTOMER and all(
        r["headers"] == [["source", "web"]] for r in header["records"]
    )
    bad = api.get(url, params={**params, "json_path": "customer.["})
    assert bad.status_code == 400 and "JSON path" in bad.json()["message"]
    bad_cursor = api.get(url, params={"cursor": "bm90IGEgY3Vyc29y"})
    assert bad_cursor.status_code == 400


def test_tombstones_sizes_and_purge(api: TestClient) -> None:
    name = _topic(api, partitions=2)
    url = f"/console/api/topics/{name}/messages"
    for i in range(4):
        assert api.post(url, json={"key": "k", "value": f"v{i}", "partition": 0}).status_code == 201
    resp = api.post(url, json={"key": "k", "value": None, "partition": 1})
    assert resp.status_code == 201
    records = api.get(url, params={"start": "earliest"}).json()["records"]
    tomb = next(r for r in records if r["partition"] == 1)
    assert tomb["tombstone"] and tomb["value"] is None and tomb["size"] == 1
    assert records[0]["timestamp_type"] == "CreateTime" and not records[0]["tombstone"]

    purge = api.post(f"/console/api/topics/{name}/delete-records", json={"partitions": {"0": 3}})
    assert purge.status_code == 200, purge.text
    assert purge.json()["log_start"] == {"0": 3}
    left = api.get(url, params={"start": "earliest"}).json()["records"]
    assert [(r["partition"], r["offset"]) for r in left] == [(0, 3), (1, 0)]
    everything = api.post(f"/console/api/topics/{name}/delete-records", json={"all": True})
    assert everything.json()["log_start"] == {"0": 4, "1": 1}
    assert api.get(url, params={"start": "earliest"}).json()["records"] == []
    parts = api.get(f"/console/api/topics/{name}/partitions").json()
    assert [(p["start_offset"], p["end_offset"]) for p in parts] == [(4, 4), (1, 1)]
    bad = api.post(f"/console/api/topics/{name}/delete-records", json={"partitions": {"9": 1}})
    assert bad.status_code == 404


def test_add_partitions(api: TestClient) -> None:
    name = _topic(api, partitions=1)
    resp = api.post(f"/console/api/topics/{name}/partitions", json={"count": 3})
    assert resp.status_code == 200, resp.text
    assert [p["partition"] for p in resp.json()["partitions"]] == [0, 1, 2]
    fewer = api.post(f"/console/api/topics/{name}/partitions", json={"count": 2})
    assert fewer.status_code == 400 and "has 3 partitions" in fewer.json()["message"]


def test_group_lag_counts_uncommitted_partitions(api: TestClient, broker: BrokerProcess) -> None:
    """Committed on one of three partitions: the others lag by all they hold, marked; a dry
    run plans without writing; 'all topics' covers the uncommitted ones; delete works."""
    name = _topic(api, partitions=3)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for p, count in enumerate((10, 20, 30)):
        for _ in range(count):
            producer.produce(name, value=b"x", partition=p)
    assert producer.flush(10) == 0
    group = f"lag-{uuid.uuid4().hex[:6]}"
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    consumer.commit(offsets=[TopicPartition(name, 0, 4)], asynchronous=False)
    consumer.close()

    detail = api.get(f"/console/api/groups/{group}").json()
    rows = [
        (o["partition"], o["committed"], o["lag"], o["lag_estimated"]) for o in detail["offsets"]
    ]
    assert rows == [(0, 4, 6, False), (1, None, 20, True), (2, None, 30, True)]
    listed = next(g for g in api.get("/console/api/groups").json() if g["group_id"] == group)
    assert listed["lag"] == 56 and listed["uncommitted_partitions"] == 2
    consumers = api.get(f"/console/api/topics/{name}/consumers").json()
    assert [(c["group_id"], c["lag"]) for c in consumers] == [(group, 56)]

    url = f"/console/api/groups/{group}/reset-offsets"
    dry = api.post(url, json={"to": "offset", "offset": 5, "dry_run": True}).json()
    assert dry["dry_run"]
    planned = [(o["partition"], o["offset"], o["committed"]) for o in dry["offsets"]]
    assert planned == [(0, 5, 4), (1, 5, None), (2, 5, None)]
    after_dry = api.get(f"/console/api/groups/{group}").json()["offsets"]
    assert [o["committed"] for o in after_dry] == [4, None, None]  # nothing written
    done = api.post(url, json={"to": "latest"}).json()
    assert [o["offset"] for o in done["offsets"]] == [10, 20, 30]
    assert api.get(f"/console/api/groups/{group}").json()["offsets"][2]["lag"] == 0

    assert api.delete(f"/console/api/groups/{group}").status_code == 204
    assert group not in [g["group_id"] for g in api.get("/console/api/groups").json()]
    assert api.delete(f"/console/api/groups/{group}").status_code == 404


def test_cluster_brokers_partitions_and_overview_counts(api: TestClient) -> None:
    name = _topic(api, partitions=2)
    cluster = api.get("/console/api/cluster").json()
    [node] = cluster["brokers"]
    assert node["controller"] and node["id"] == cluster["controller_id"]
    assert node["leaders"] >= 2 and "rack" in node
    rows = api.get("/console/api/cluster/partitions").json()
    mine = [r for r in rows if r["topic"] == name]
    assert [(r["partition"], r["leader"], r["isr"], r["under_replicated"]) for r in mine] == [
        (0, 1, [1], False), (1, 1, [1], False),
    ]  # fmt: skip
    assert not any(r["internal"] for r in rows)
    overview = api.get("/console/api/overview").json()
    user = sum(r["partition"] >= 0 for r in rows)
    assert overview["partitions"] == user and overview["internal_partitions"] > 0
