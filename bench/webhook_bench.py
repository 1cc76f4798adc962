"""Webhook ingest benchmark: NDJSON batches of 1,000 records of ~200 bytes.

    .venv/bin/python bench/webhook_bench.py                 # 300 requests per row, 4 clients
    .venv/bin/python bench/webhook_bench.py --requests 100 --clients 8

Rows (records/s and request latency p50/p99, nearest-rank):

- ``web server only``: the same FastAPI app and uvicorn server (``hub.rest``'s ``create_app`` +
  ``RestServer``) in its own process, with a stand-in webhook task that parses the body into
  records exactly as ``http-webhook`` does and answers 200 at once: HTTP + parsing, no broker.
- ``http-webhook, ...``: a real ``python -m sluice up`` (broker, worker and REST API; its
  server CPU counts the broker too, whether a thread or a child process) with an
  ``http-webhook`` connector; every 200 means every record was acknowledged by the
  broker (acks=all), so this is the durable ingest rate. Two rows: records as parsed JSON
  through the JsonConverter (the default), and ``webhook.value.format=text`` with the
  StringConverter (each line's text is produced as is, after validation).

Clients are threads with keep-alive ``http.client`` connections in this process (cheap per
request, so the client is not the bottleneck it would be with a heavier library). The table
ends with the machine's limits: every figure shares those cores with the client. After each
hub row the topic's size is read from the broker: it must hold at least every record that was
answered 200, or the bench fails.

``--profile DIR`` samples the hub with ``py-spy record --gil`` during each hub row (only the
thread holding the GIL: where the one interpreter's time goes) and prints the hot spots.
Target (issue 9): >= 50,000 records/s.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench._common import machine_summary  # noqa: E402

TARGET = 50_000
BATCH = 1000
PLAIN_JSON = {"key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false"}
# Webhook senders authenticate: the connectors check this token themselves (as a sender's
# would be checked), and the stand-in server requires it as its REST credential.
WEBHOOK_TOKEN = "bench-webhook-token"
AUTH = {"Authorization": f"Bearer {WEBHOOK_TOKEN}"}
CONNECTORS = [
    ("bench-json", "http-webhook, JsonConverter (schemas off)",
     {**PLAIN_JSON, "webhook.auth.token": WEBHOOK_TOKEN}),
    ("bench-text", "http-webhook, webhook.value.format=text + StringConverter",
     {"webhook.value.format": "text", "value.converter": "StringConverter",
      "webhook.auth.token": WEBHOOK_TOKEN}),
]  # fmt: skip


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def progress(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def make_body(start: int) -> bytes:
    """1,000 NDJSON lines of ~200 bytes each (a typical event: ids, a time, a message)."""
    lines = []
    for i in range(start, start + BATCH):
        event = {"id": i, "ts": 1767225600000 + i, "user": f"user-{i % 9973:05d}",
                 "action": "page_view", "path": f"/products/{i % 1000:04d}", "msg": ""}  # fmt: skip
        line = json.dumps(event, separators=(",", ":"))
        event["msg"] = "x" * (199 - len(line))
        lines.append(json.dumps(event, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds so far of a process (all its threads) and its live
    descendants: ``sluice up`` may run the broker as a child process."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        for tasks in Path(f"/proc/{pid}/task").glob("*/children"):
            total += sum(cpu_seconds(int(child)) for child in tasks.read_text().split())
    except (FileNotFoundError, ProcessLookupError):
        pass  # a child that just ended
    return total


Result = tuple[float, list[float], int, float]


def measure(pid: int, port: int, path: str, requests: int, clients: int) -> Result:
    """``drive`` plus the server's CPU seconds (with its child processes) over the run."""
    before = cpu_seconds(pid)
    seconds, latencies, records = drive(port, path, requests, clients)
    return seconds, latencies, records, cpu_seconds(pid) - before


def topic_size(bootstrap: str, topic: str) -> int:
    """Records in ``topic`` (sum of high minus low watermarks over its partitions)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "webhook-bench"})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        total = 0
        for p in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            total += high - low
        return total
    finally:
        consumer.close()


def profiled(pid: int, out_dir: Path | None, name: str, run: Any) -> Any:
    """``run()``, sampled with ``py-spy record --gil`` when ``out_dir`` is set."""
    if out_dir is None:
        return run()
    from bench._profile import hot_spots, py_spy_path, top_inclusive

    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}.txt"
    cmd = [py_spy_path() or "py-spy", "record", "--pid", str(pid), "--rate", "250", "--gil"]
    spy = subprocess.Popen(
        [*cmd, "--nonblocking", "--threads", "--format", "raw", "--output", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        return run()
    finally:
        spy.send_signal(signal.SIGINT)
        spy.wait(30)
        if out.exists():
            spots, samples = hot_spots(out, top=25)
            progress(f"  profile {out} ({samples} samples holding the GIL), self / inclusive %:")
            for spot in spots:
                progress(f"    {spot.self_pct:5.1f} {spot.total_pct:5.1f}  {spot.where}")
            for prefix in ("hub/", "connectors/", "starlette/", "uvicorn/", "fastapi/"):
                for spot in top_inclusive(out, prefix, top=8):
                    progress(f"    {spot.self_pct:5.1f} {spot.total_pct:5.1f}  {spot.where}")


def drive(port: int, path: str, requests: int, clients: int) -> tuple[float, list[float], int]:
    """(seconds, per-request latencies, records acknowledged) for ``requests`` POSTs."""
    bodies = [make_body(i * BATCH) for i in range(8)]
    latencies: list[float] = []
    errors: list[str] = []
    counter = iter(range(requests))
    lock = threading.Lock()

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {"Content-Type": "application/x-ndjson", **AUTH}
        while True:
            with lock:
                n = next(counter, None)
            if n is None:
                break
            t0 = time.perf_counter()
            conn.request("POST", path, body=bodies[n % len(bodies)], headers=headers)
            response = conn.getresponse()
            data = response.read()
            elapsed = time.perf_counter() - t0
            with lock:
                if response.status == 200:
                    latencies.append(elapsed)
                else:
                    errors.append(f"{response.status} {data[:200]!r}")
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    if errors:
        progress(f"  {len(errors)} errors, first: {errors[0]}")
    return seconds, sorted(latencies), len(latencies) * BATCH


def nearest_rank(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    index = max(0, min(len(sorted_values) - 1, int(-(-p * len(sorted_values) // 100)) - 1))
    return sorted_values[index]


Row = tuple[str, float, float, float, float]


def row(name: str, result: Result) -> Row:
    """(name, records/s, p50 ms, p99 ms, server CPU microseconds per record)."""
    seconds, latencies, records, cpu = result
    rate = records / seconds if seconds else 0.0
    p50, p99 = nearest_rank(latencies, 50) * 1000, nearest_rank(latencies, 99) * 1000
    us = cpu / records * 1e6 if records else float("nan")
    progress(f"  {name}: {rate:,.0f} records/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms, {us:.1f} us")
    return name, rate, p50, p99, us


def serve_baseline(port: int) -> None:
    """The REST app with a stand-in herder whose webhook task answers without producing."""
    from connectors.http.webhook import WebhookSourceTask
    from hub.rest.app import create_app
    from hub.rest.server import RestServer
    from hub.runtime.config import WorkerConfig

    class NoProduce(WebhookSourceTask):
        async def ingest_async(self, body: bytes, headers: Any) -> Any:
            """As the real one (parsed on the event loop), minus the queue and the wait."""
            records = self._prepare(body, headers)
            return records if isinstance(records, tuple) else (200, {"accepted": len(records)}, {})

    class Context:
        offset_reader = None
        config: dict[str, str] = {}

    task = NoProduce(Context())  # type: ignore[arg-type]
    task.start({"name": "bench", "topic": "bench"})

    class Slot:  # what hub.runtime.ingest reads from a WorkerSourceTask
        failed = False
        paused = False
        stopping = threading.Event()

    slot = Slot()
    slot.task = task  # type: ignore[attr-defined]

    class Worker:
        def task_ids(self, name: str) -> list[int]:
            return [0]

        def task(self, _id: int) -> Slot:
            return slot

    class Herder:
        worker = Worker()
        config = None

        def connectors(self) -> list[str]:
            return ["bench"]

    config = WorkerConfig.from_mapping(
        {"bootstrap.servers": "127.0.0.1:9", "rest.auth.token": WEBHOOK_TOKEN}
    )
    server = RestServer(create_app(Herder(), config), "127.0.0.1", port)
    server.start()
    threading.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--profile", type=Path, help="py-spy --gil stacks of the hub, here")
    parser.add_argument("--serve-baseline", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_baseline:
        serve_baseline(args.serve_baseline)
        return
    from tests.fixtures.hub import HubProcess, free_port

    rows = []
    load_before = os.getloadavg()[0]
    port = free_port()
    progress("web server only (no producing)")
    baseline = subprocess.Popen(
        [sys.executable, __file__, "--serve-baseline", str(port)], cwd=REPO,
        env={**os.environ, "SLUICE_LOG_LEVEL": "WARNING"},
    )  # fmt: skip
    try:
        _wait_for(lambda: _post_ok(port, "/ingest/bench"), 30)
        drive(port, "/ingest/bench", 20, args.clients)  # warm-up
        result = measure(baseline.pid, port, "/ingest/bench", args.requests, args.clients)
        rows.append(row("web server only (parse, no producing)", result))
    finally:
        baseline.terminate()
        baseline.wait(10)
    progress("http-webhook via sluice up")
    with tempfile.TemporaryDirectory(prefix="webhook-bench-") as tmp:
        hub = HubProcess(Path(tmp) / "hub")
        hub.start()
        try:
            for name, label, extra in CONNECTORS:
                config = {"connector.class": "http-webhook", "topic": name, **extra}
                status, body = hub.request("POST", "/connectors", {"name": name, "config": config})
                assert status == 201, body
                path = f"/ingest/{name}"
                _wait_for(lambda p=path: _post_ok(hub.rest_port, p), 30)
                _, _, acked = drive(hub.rest_port, path, 20, args.clients)  # warm-up
                assert hub.proc is not None
                pid = hub.proc.pid
                result = profiled(
                    pid, args.profile, name,
                    lambda p=path, i=pid: measure(i, hub.rest_port, p, args.requests, args.clients),
                )  # fmt: skip
                rows.append(row(label, result))
                hub.request("PUT", f"/connectors/{name}/pause")
                stored, acked = topic_size(hub.bootstrap, name), acked + result[2]
                if stored < acked:
                    raise SystemExit(f"{name}: {acked} records answered 200, {stored} in the topic")
                progress(f"  topic {name} holds {stored:,} records; {acked:,} were answered 200")
        finally:
            hub.stop()
        summary = machine_summary(tmp)
    table(rows, args, summary, (load_before, os.getloadavg()[0]))


def table(rows: list[Row], args: Any, summary: str, load: tuple[float, float]) -> None:
    out(
        f"| {args.requests} POSTs x {BATCH} NDJSON records of ~200 B, {args.clients} clients "
        "| records/s | p50 ms | p99 ms | server CPU us/record | records/s per server core |"
    )
    out("|---|---:|---:|---:|---:|---:|")
    for name, rate, p50, p99, us in rows:
        out(f"| {name} | {rate:,.0f} | {p50:.1f} | {p99:.1f} | {us:.1f} | {1e6 / us:,.0f} |")
    durable = max(r[1] for r in rows[1:])
    out(f"\nTarget >= {TARGET:,} records/s: {'met' if durable >= TARGET else 'NOT met'} "
        f"({durable / TARGET:.0%} measured).")  # fmt: skip
    out(f"Machine: {summary}; 1-minute load average {load[0]:.1f} before, {load[1]:.1f} after.")


def _post_ok(port: int, path: str) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("POST", path, body=b"{}", headers={"Content-Type": "application/json", **AUTH})
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


def _wait_for(predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the server")
        time.sleep(0.1)


if __name__ == "__main__":
    main()
