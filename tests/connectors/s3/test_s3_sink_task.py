"""The S3 sink task against a real S3 HTTP API (moto server, or MinIO with Docker).

Tasks are driven directly with the small in-test context (unit tests of connector logic over a
real store); tests/connectors/s3/test_s3_e2e.py runs the same sink through ``sluice up``.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pyarrow.parquet as pq
import pytest

from connectors.s3.connector import S3SinkConnector, S3SinkTask
from hub.api import ConnectError, TopicPartition, validate_config
from hub.api.schema import INT64_SCHEMA, STRING_SCHEMA, struct
from tests.connectors._storage.sink_context import Clock, Context, rec
from tests.fixtures.hub import free_port
from tests.fixtures.s3 import S3Server

TP = TopicPartition("orders", 0)
JSON = "io.confluent.connect.s3.format.json.JsonFormat"
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"


def config(server: S3Server, bucket: str, **extra: Any) -> dict[str, Any]:
    return {"name": "s3", "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "topics": "orders", "flush.size": 3, "format.class": JSON,
            **server.sink_config(bucket), **extra}  # fmt: skip


def start(cfg: dict[str, Any], clock: Clock | None = None) -> S3SinkTask:
    task = S3SinkTask(Context(cfg), clock or Clock())
    task.start(cfg)
    task.open([TP])
    return task


def put(task: Any, records: list[Any]) -> None:
    """put, then wait for the background uploads (what a later pre_commit would observe)."""
    task.put(records)
    assert task.writer is not None
    task.writer.drain()


def keys(client: Any, bucket: str) -> list[str]:
    resp = client.list_objects_v2(Bucket=bucket)
    return sorted(o["Key"] for o in resp.get("Contents", []))


def body(client: Any, bucket: str, key: str) -> bytes:
    data: bytes = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    return data


def orders(start: int, stop: int) -> list[Any]:
    return [rec(i, {"id": i, "item": f"item-{i}"}, topic="orders") for i in range(start, stop)]


def test_json_objects_have_confluent_names_and_contents(
    s3_server: S3Server, s3_bucket: str, s3_client: Any
) -> None:
    task = start(config(s3_server, s3_bucket))
    put(task, orders(0, 7))
    assert task.pre_commit({TP: 7}) == {TP: 6}
    assert keys(s3_client, s3_bucket) == [
        "topics/orders/partition=0/orders+0+0000000000.json",
        "topics/orders/partition=0/orders+0+0000000003.json",
    ]
    lines = body(s3_client, s3_bucket, keys(s3_client, s3_bucket)[1]).decode().splitlines()
    assert [json.loads(x)["id"] for x in lines] == [3, 4, 5]
    task.stop()


def test_parquet_with_schema_reads_back(
    s3_server: S3Server, s3_bucket: str, s3_client: Any
) -> None:
    schema = struct(("id", INT64_SCHEMA), ("item", STRING_SCHEMA))
    task = start(config(s3_server, s3_bucket, **{"format.class": PARQUET, "flush.size": 2}))
    put(task, [r.replace(value_schema=schema) for r in orders(0, 2)])
    (key,) = keys(s3_client, s3_bucket)
    assert key.endswith("orders+0+0000000000.snappy.parquet")
    table = pq.read_table(io.BytesIO(body(s3_client, s3_bucket, key)))
    assert table.to_pylist() == [{"id": 0, "item": "item-0"}, {"id": 1, "item": "item-1"}]


def test_large_object_goes_multipart(s3_server: S3Server, s3_bucket: str, s3_client: Any) -> None:
    big = "x" * 1_100_000
    task = start(config(s3_server, s3_bucket, **{"s3.part.size": 5 * 1024 * 1024,
                                                  "flush.size": 6}))  # fmt: skip
    put(task, [rec(i, {"blob": big}, topic="orders") for i in range(6)])
    (key,) = keys(s3_client, s3_bucket)
    head = s3_client.head_object(Bucket=s3_bucket, Key=key)
    assert "-" in head["ETag"]  # a multipart upload's ETag is "<md5>-<parts>"
    assert head["ContentLength"] > 6_000_000


def test_crash_after_upload_before_offset_commit_is_skipped_on_restart(
    s3_server: S3Server, s3_bucket: str, s3_client: Any
) -> None:
    cfg = config(s3_server, s3_bucket)
    first = start(cfg)
    put(first, orders(0, 4))  # [0,3) uploaded; the worker dies before committing offsets
    second = start(cfg)  # redelivered from offset 0
    put(second, orders(0, 7))
    assert keys(s3_client, s3_bucket) == [
        "topics/orders/partition=0/orders+0+0000000000.json",
        "topics/orders/partition=0/orders+0+0000000003.json",
    ]
    ids = [json.loads(x)["id"] for k in keys(s3_client, s3_bucket)
           for x in body(s3_client, s3_bucket, k).decode().splitlines()]  # fmt: skip
    assert ids == list(range(6))  # no duplicate, no gap
    assert second.pre_commit({TP: 7}) == {TP: 6}


def test_partial_batch_is_rewritten_under_the_same_names(
    s3_server: S3Server, s3_bucket: str, s3_client: Any
) -> None:
    cfg = config(s3_server, s3_bucket, **{"partitioner.class": "FieldPartitioner",
                                          "partition.field.name": "k"})  # fmt: skip
    values = [{"k": "a"}, {"k": "b"}, {"k": "b"}, {"k": "a"}, {"k": "b"}, {"k": "a"}]
    records = [rec(i, v, topic="orders") for i, v in enumerate(values)]
    task = start(cfg)
    put(task, records)
    # Simulate a crash in the middle of the second batch's upload: its first file is missing.
    s3_client.delete_object(Bucket=s3_bucket, Key="topics/orders/k=a/orders+0+0000000003.json")
    before = keys(s3_client, s3_bucket)
    assert "topics/orders/k=b/orders+0+0000000004.json" in before
    again = start(cfg)
    put(again, records)
    after = keys(s3_client, s3_bucket)
    assert after == sorted([*before, "topics/orders/k=a/orders+0+0000000003.json"])
    rows = sorted(json.dumps(json.loads(x)) for k in after
                  for x in body(s3_client, s3_bucket, k).decode().splitlines())  # fmt: skip
    assert len(rows) == 6


def test_schedule_rotation_commits_quiet_partition(
    s3_server: S3Server, s3_bucket: str, s3_client: Any
) -> None:
    clock = Clock(1_700_000_000_000)
    cfg = config(s3_server, s3_bucket, **{"flush.size": 1000,
                                          "rotate.schedule.interval.ms": 60_000})  # fmt: skip
    task = start(cfg, clock)
    put(task, orders(0, 2))
    assert task.pre_commit({TP: 2}) == {TP: 0}
    clock.now += 60_000
    task.pre_commit({TP: 2})  # the boundary passed: the batch is handed to the uploader
    assert task.writer is not None
    task.writer.drain()
    assert task.pre_commit({TP: 2}) == {TP: 2}
    assert len(keys(s3_client, s3_bucket)) == 1


def test_missing_bucket_fails_with_what_to_do(s3_server: S3Server) -> None:
    with pytest.raises(ConnectError, match=r"does not exist.*create it or fix s3\.bucket\.name"):
        start(config(s3_server, "no-such-bucket"))


def test_unreachable_endpoint_fails_with_what_to_do(s3_server: S3Server) -> None:
    cfg = config(s3_server, "b", **{"store.url": f"http://127.0.0.1:{free_port()}",
                                    "s3.part.retries": 0})  # fmt: skip
    with pytest.raises(ConnectError, match=r"cannot reach S3 at .*check store\.url"):
        start(cfg)


def test_wrong_credentials_fail_with_what_to_do(s3_auth_server: S3Server) -> None:
    cfg = config(s3_auth_server, "any-bucket", **{"aws.secret.access.key": "wrong"})
    with pytest.raises(ConnectError, match=r"aws\.access\.key\.id"):
        start(cfg)


def test_connector_config_validation_names_keys() -> None:
    problems = validate_config(S3SinkConnector.config_model, {"topics": "t"})
    assert {"s3.bucket.name", "flush.size", "format.class"} <= set(problems)


def test_storage_sinks_declare_exactly_once_delivery() -> None:
    """What the crash tests above show, declared (hub.api ``exactly_once_delivery``)."""
    from connectors.hdfs.connector import HdfsSinkConnector
    from connectors.s3.connector import S3SinkConnector
    from hub.api import ExactlyOnceSupport

    for cls in (S3SinkConnector, HdfsSinkConnector):
        assert cls.exactly_once_delivery({}) is ExactlyOnceSupport.SUPPORTED
