"""The HDFS sink task over WebHDFS: the test double in tests/fixtures/webhdfs.py, or a real
cluster when SLUICE_TEST_WEBHDFS_URL is set (the opt-in test at the end).

Tasks are driven directly with the small in-test context (unit tests of connector logic).
"""

from __future__ import annotations

import io
import json
import os
import uuid
from typing import Any

import pyarrow.parquet as pq
import pytest

from connectors._storage.destinations.hdfs import webhdfs_url
from connectors.hdfs.connector import HdfsSinkTask
from hub.api import ConnectError, RetriableError, TopicPartition
from tests.connectors._storage.sink_context import Clock, Context, rec
from tests.fixtures.hub import free_port
from tests.fixtures.webhdfs import WebHdfsServer

TP = TopicPartition("logs", 0)


def config(url: str, base: str, **extra: Any) -> dict[str, Any]:
    return {"name": "hdfs", "connector.class": "io.confluent.connect.hdfs3.Hdfs3SinkConnector",
            "topics": "logs", "hdfs.url": url, "flush.size": 3, "topics.dir": f"{base}/topics",
            "logs.dir": f"{base}/logs", "hdfs.user": "sluice",
            "format.class": "io.confluent.connect.hdfs3.json.JsonFormat", **extra}  # fmt: skip


def start(cfg: dict[str, Any]) -> HdfsSinkTask:
    task = HdfsSinkTask(Context(cfg), Clock())
    task.start(cfg)
    task.open([TP])
    return task


def put(task: Any, records: list[Any]) -> None:
    """put, then wait for the background uploads (what a later pre_commit would observe)."""
    task.put(records)
    assert task.writer is not None
    task.writer.drain()


def lines(i: int, j: int) -> list[Any]:
    return [rec(n, {"n": n, "msg": f"line {n}"}, topic="logs") for n in range(i, j)]


def files(server: WebHdfsServer, base: str) -> list[str]:
    root = server.local(f"{base}/topics")
    found = (str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    return sorted(name for name in found if not name.startswith("+tmp/"))


@pytest.fixture
def base() -> str:
    return f"/t-{uuid.uuid4().hex[:8]}"


def test_files_are_renamed_into_place_with_confluent_names(
    webhdfs: WebHdfsServer, base: str
) -> None:
    task = start(config(webhdfs.url, base))
    put(task, lines(0, 7))
    assert task.pre_commit({TP: 7}) == {TP: 6}
    assert files(webhdfs, base) == [
        "logs/partition=0/logs+0+0000000000.json",
        "logs/partition=0/logs+0+0000000003.json",
    ]  # and nothing left in +tmp
    data = webhdfs.local(f"{base}/topics/logs/partition=0/logs+0+0000000003.json").read_bytes()
    assert [json.loads(x)["n"] for x in data.splitlines()] == [3, 4, 5]
    assert json.loads(webhdfs.local(f"{base}/logs/logs/0/committed.json").read_text()) == {
        "start": 3, "next": 6}  # fmt: skip
    assert webhdfs.requests["RENAME"] >= 4 and webhdfs.requests["CREATE"] >= 4


def test_restart_resumes_after_committed_files(webhdfs: WebHdfsServer, base: str) -> None:
    cfg = config(webhdfs.url, base, **{"format.class": "ParquetFormat"})
    put(start(cfg), lines(0, 4))
    again = start(cfg)
    put(again, lines(0, 6))  # redelivered from 0 because offsets were never committed
    names = files(webhdfs, base)
    assert names == ["logs/partition=0/logs+0+0000000000.snappy.parquet",
                     "logs/partition=0/logs+0+0000000003.snappy.parquet"]  # fmt: skip
    rows = [r["n"] for name in names
            for r in pq.read_table(io.BytesIO(
                webhdfs.local(f"{base}/topics/{name}").read_bytes())).to_pylist()]  # fmt: skip
    assert rows == list(range(6))


def test_crash_before_marker_rewrites_same_names(webhdfs: WebHdfsServer, base: str) -> None:
    cfg = config(webhdfs.url, base)
    task = start(cfg)
    put(task, lines(0, 6))
    # Files of [3, 6) renamed into place, but the marker still says next=3 (crash between).
    marker = webhdfs.local(f"{base}/logs/logs/0/committed.json")
    marker.write_text(json.dumps({"start": 0, "next": 3}))
    again = start(cfg)
    put(again, lines(0, 6))
    assert len(files(webhdfs, base)) == 2
    assert json.loads(marker.read_text())["next"] == 6


def test_namenode_hiccup_is_retriable_and_the_batch_survives(
    webhdfs: WebHdfsServer, base: str
) -> None:
    task = start(config(webhdfs.url, base))
    webhdfs.fail_next("RENAME", 1)
    with pytest.raises(RetriableError):
        put(task, lines(0, 3))  # the upload fails in the background; the partition rewinds
    assert task.context.rewinds == {TP: 0}  # type: ignore[attr-defined]
    put(task, lines(0, 4))  # the worker redelivers from the rewind offset
    assert files(webhdfs, base) == ["logs/partition=0/logs+0+0000000000.json"]


def test_unreachable_namenode_fails_with_what_to_do(base: str) -> None:
    cfg = config(f"http://127.0.0.1:{free_port()}", base, **{"hdfs.timeout.ms": 2000})
    with pytest.raises(ConnectError, match=r"cannot reach WebHDFS .*check hdfs\.url"):
        start(cfg)


def test_hdfs_urls_map_to_webhdfs() -> None:
    assert webhdfs_url("hdfs://nn:8020", 9870) == "http://nn:9870"
    assert webhdfs_url("webhdfs://nn:50070", 9870) == "http://nn:50070"
    assert webhdfs_url("http://nn:9870/", 9870) == "http://nn:9870"


@pytest.mark.skipif(
    not os.environ.get("SLUICE_TEST_WEBHDFS_URL"),
    reason="set SLUICE_TEST_WEBHDFS_URL=http://namenode:9870 to test a real HDFS cluster",
)
def test_real_cluster_roundtrip() -> None:
    from hdfs import InsecureClient

    url = os.environ["SLUICE_TEST_WEBHDFS_URL"]
    user = os.environ.get("SLUICE_TEST_WEBHDFS_USER", "sluice")
    base = f"/tmp/sluice-test-{uuid.uuid4().hex[:8]}"
    task = start(config(url, base, **{"hdfs.user": user}))
    put(task, lines(0, 3))
    client = InsecureClient(url, user=user)
    try:
        path = f"{base}/topics/logs/partition=0/logs+0+0000000000.json"
        with client.read(path) as reader:
            assert [json.loads(x)["n"] for x in reader.read().splitlines()] == [0, 1, 2]
        assert start(config(url, base, **{"hdfs.user": user})).pre_commit({TP: 3}) == {TP: 3}
    finally:
        client.delete(base, recursive=True)
