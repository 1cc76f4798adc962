"""Storage sink benchmark (S3 parts): records/s of the S3 sink beside raw boto3 puts.

    .venv/bin/python bench/sink_bench.py                   # 1,000,000 records of ~200 bytes
    .venv/bin/python bench/sink_bench.py --records 200000 --markdown out.md

Rows:

- ``S3 sink, JSON lines`` / ``S3 sink, Parquet``: an ``S3SinkTask`` driven directly (put in
  batches of 500, as the worker delivers them, then pre_commit), ``flush.size`` = records/10 so
  ten objects are written; timed from the first put until pre_commit returns every offset, i.e.
  until every object is in the store.
- ``raw boto3 put of the records' bytes`` (the target's reference, the same for every
  format): the issue's "raw speed of the same store (boto3 put of the same bytes)" for these
  1M records of ~200 B, i.e. the store taking the records' own bytes. Measured as a put of
  the JSON sink's objects (the records as JSON lines: ~200 B each, in objects of the size the
  JSON sink writes), read back untimed and uploaded again to another bucket with the same
  boto3 client settings.
- ``raw put of this sink's own objects`` (extra, stricter, not the target): the objects this
  format's sink wrote, uploaded the same way. For JSON lines it is the reference above; for
  Parquet the objects are ~7x smaller than the records' bytes, so this put is of ~28 MB
  against the 200 MB of records the sink handles, and ``sink / own objects`` says how close
  the sink gets to a store that only had to take its compressed output.

The S3 store is a moto server in its own process on 127.0.0.1 (no MinIO here; see
/work/shared/notes/test-infrastructure.md). Records (dict values with a Connect schema for
Parquet) are built before the clock starts: the figure is the sink's, not the converter's.
Targets (issue 6): >= 50k records/s per sink and >= 50% of the raw store speed.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

from bench._common import free_port, machine_summary  # noqa: E402
from connectors.s3.connector import S3SinkTask  # noqa: E402
from hub.api import Schema, SinkRecord, TopicPartition  # noqa: E402
from hub.api.schema import FLOAT64_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, struct  # noqa: E402

TARGET_RPS = 50_000
TARGET_RATIO = 0.5
SCHEMA: Schema = struct(
    ("id", INT64_SCHEMA), ("user", STRING_SCHEMA), ("event", STRING_SCHEMA),
    ("url", STRING_SCHEMA), ("referrer", STRING_SCHEMA), ("ts", INT64_SCHEMA),
    ("amount", FLOAT64_SCHEMA),
)  # fmt: skip


class Ctx:
    config: dict[str, Any] = {}

    def assignment(self) -> set[TopicPartition]:
        return set()

    def pause(self, *p: TopicPartition) -> None: ...
    def resume(self, *p: TopicPartition) -> None: ...
    def offset(self, p: TopicPartition, o: int) -> None: ...
    def request_commit(self) -> None: ...


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/moto-api/", timeout=1)
            return proc, url
        except urllib.error.HTTPError:
            return proc, url
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("moto server did not start")


def client(url: str) -> Any:
    return boto3.client(
        "s3", endpoint_url=url, aws_access_key_id="bench", aws_secret_access_key="bench",
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"mode": "standard"}),
    )  # fmt: skip


def make_records(n: int, topic: str, with_schema: bool) -> list[SinkRecord]:
    """~200-byte values (as JSON) with varying content."""
    schema = SCHEMA if with_schema else None
    out = []
    for i in range(n):
        value = {
            "id": i, "user": f"user-{i % 50_000:06d}", "event": ("click", "view", "buy")[i % 3],
            "url": f"/products/category-{i % 97:02d}/item-{i:09d}?ref=campaign-{i % 13}",
            "referrer": f"https://search.example.com/q?term=product+{i % 1000}",
            "ts": 1_700_000_000_000 + i, "amount": (i % 1000) / 10,
        }  # fmt: skip
        out.append(SinkRecord(topic=topic, partition=0, offset=i, value=value,
                              value_schema=schema, timestamp=1_700_000_000_000 + i))  # fmt: skip
    return out


def run_sink(url: str, bucket: str, fmt: str, records: list[SinkRecord]) -> float:
    n = len(records)
    cfg = {
        "name": f"bench-{fmt}", "topics": records[0].topic, "s3.bucket.name": bucket,
        "store.url": url, "s3.region": "us-east-1", "aws.access.key.id": "bench",
        "aws.secret.access.key": "bench", "flush.size": max(1, n // 10), "format.class": fmt,
    }  # fmt: skip
    task = S3SinkTask(Ctx())
    task.start(cfg)
    tp = TopicPartition(records[0].topic, 0)
    task.open([tp])
    t0 = time.perf_counter()
    for i in range(0, n, 500):
        task.put(records[i : i + 500])
    assert task.writer is not None
    task.writer.drain()  # the last object's upload runs in the background
    done = task.pre_commit({tp: n})
    elapsed = time.perf_counter() - t0
    task.stop()
    assert done == {tp: n}, done
    return elapsed


def run_raw(s3: Any, src: str, dst: str, prefix: str) -> tuple[float, int]:
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=src, Prefix=prefix)["Contents"]]
    blobs = [(k, s3.get_object(Bucket=src, Key=k)["Body"].read()) for k in keys]
    t0 = time.perf_counter()
    for key, data in blobs:
        s3.put_object(Bucket=dst, Key=key, Body=data)
    return time.perf_counter() - t0, sum(len(d) for _, d in blobs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    proc, url = start_moto()
    try:
        s3 = client(url)
        for b in ("sink", "raw", "warmup"):
            s3.create_bucket(Bucket=b)
        for i in range(20):  # moto builds its S3 backend lazily: not part of either figure
            s3.put_object(Bucket="warmup", Key=f"w{i}", Body=b"x" * 4_000_000)
        rows = []
        json_raw_s = 0.0  # the reference: a put of the records' own bytes (the JSON objects)
        for label, fmt, topic, schema in (
            ("JSON lines", "io.confluent.connect.s3.format.json.JsonFormat", "json", False),
            ("Parquet", "io.confluent.connect.s3.format.parquet.ParquetFormat", "pq", True),
        ):
            print(f"building {args.records:,} records ({label})...", file=sys.stderr)
            records = make_records(args.records, topic, schema)
            gc.collect()
            gc.freeze()  # the records live through the run: keep the collector off them
            sink_s = run_sink(url, "sink", fmt, records)
            gc.unfreeze()
            del records
            raw_s, size = run_raw(s3, "sink", "raw", f"topics/{topic}/")
            if fmt.endswith("JsonFormat"):
                json_raw_s = raw_s  # runs first: every format is compared with it
            n = args.records
            rows.append((label, n / sink_s, size / sink_s / 1e6, n / json_raw_s,
                         json_raw_s / sink_s, n / raw_s, raw_s / sink_s, size))  # fmt: skip
            print(f"{label}: sink {n / sink_s:,.0f} rec/s, raw put of the records' bytes "
                  f"{n / json_raw_s:,.0f} rec/s, raw put of its own objects {n / raw_s:,.0f} "
                  "rec/s", file=sys.stderr)  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(10)
    lines = [
        f"Machine: {machine_summary(tempfile.gettempdir())}",
        f"Store: moto server (separate process) at {url}; {args.records:,} records of ~200 B",
        "",
        f"Load average at the end: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}",
        "",
        "| sink | records/s | MB/s (object bytes) | raw boto3 put of the records' bytes "
        "(records/s) | sink / raw (target's reference) | target (>=50k/s, >=50%) "
        "| extra, stricter: raw put of this sink's own objects (records/s) "
        "| sink / own objects | object bytes |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for label, rps, mbs, raw_rps, ratio, own_rps, own_ratio, size in rows:
        verdict = "pass" if rps >= TARGET_RPS and ratio >= TARGET_RATIO else "MISS"
        lines.append(f"| S3 sink, {label} | {rps:,.0f} | {mbs:,.1f} | {raw_rps:,.0f} | "
                     f"{ratio:.0%} | {verdict} | {own_rps:,.0f} | {own_ratio:.0%} | "
                     f"{size / 1e6:,.1f} MB |")  # fmt: skip
    table = "\n".join(lines)
    sys.stdout.write(table + "\n")
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")


if __name__ == "__main__":
    main()
