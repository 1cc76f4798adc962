"""The HDFS sink end to end through ``sluice up`` and its REST API, writing to the WebHDFS test
double (tests/fixtures/webhdfs.py) with Confluent's HDFS 3 sink config."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.fixtures.broker import wait_until
from tests.fixtures.webhdfs import WebHdfsServer


def test_hdfs_sink_through_sluice_up(hub_factory: Any, webhdfs: WebHdfsServer) -> None:
    from confluent_kafka import Producer

    hub = hub_factory(**{"offset.flush.interval.ms": 200})
    status, plugins = hub.request("GET", "/connector-plugins")
    assert status == 200, plugins
    assert "io.confluent.connect.hdfs3.Hdfs3SinkConnector" in {p["class"] for p in plugins}
    producer = Producer({"bootstrap.servers": hub.bootstrap, "linger.ms": 5})
    for i in range(6):
        producer.produce("metrics", json.dumps({"id": i, "cpu": i / 10}).encode())
    assert producer.flush(30) == 0
    base = f"/e2e-{uuid.uuid4().hex[:8]}"
    config = {
        "connector.class": "io.confluent.connect.hdfs3.Hdfs3SinkConnector",
        "topics": "metrics", "hdfs.url": webhdfs.url, "flush.size": "3",
        "topics.dir": f"{base}/topics", "logs.dir": f"{base}/logs",
        "format.class": "io.confluent.connect.hdfs3.json.JsonFormat",
        "value.converter.schemas.enable": "false",
    }  # fmt: skip
    status, body = hub.request("POST", "/connectors", {"name": "metrics-hdfs", "config": config})
    assert status == 201, body
    root = webhdfs.local(f"{base}/topics/metrics/partition=0")

    def written() -> list[str]:
        return sorted(p.name for p in root.glob("*.json")) if root.exists() else []

    wait_until(lambda: len(written()) == 2, 40, "two files renamed into place")
    assert written() == ["metrics+0+0000000000.json", "metrics+0+0000000003.json"]
    ids = [json.loads(line)["id"] for name in written()
           for line in (root / name).read_text().splitlines()]  # fmt: skip
    assert ids == list(range(6))
