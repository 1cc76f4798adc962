"""File pipeline benchmark: file source -> broker -> file sink, 100-byte lines.

    .venv/bin/python bench/file_pipeline_bench.py               # 1,000,000 lines
    .venv/bin/python bench/file_pipeline_bench.py --lines 200000
    .venv/bin/python bench/file_pipeline_bench.py --hub-leg1-only --gc-threshold 50000

Rows (lines/s; each also as MB/s of input):

- ``cat | loopback socket``: ``cat FILE > /dev/tcp/127.0.0.1:PORT`` into a Python reader — what
  moving these bytes costs on this machine with no framing at all: the ceiling for comparison.
- ``source task only``: FileSourceTask.poll() until the file is consumed (read, split, one
  ``SourceRecordBatch`` of lines per poll).
- ``leg 1 source -> broker``: poll() + string conversion + one idempotent confluent-kafka
  producer (acks=all) into a Sluice broker started here; timed until every record is acked.
- ``leg 2 broker -> sink``: a consumer (assigned, from offset 0) + SinkRecords + FileSinkTask
  put() and a final pre_commit (write + fsync); timed until the last line is durable.
- ``end to end``: both legs at once in one process (as one hub worker runs them), from the
  first poll until the sink's output is durable and equal to the input byte for byte.
- ``hub leg 1`` / ``hub leg 2`` / ``hub end to end``: the file connectors created over REST
  in an in-process Herder (the worker ``sluice connect`` runs, against the broker above): the
  source alone until the topic holds every line, then the sink alone on that topic until the
  output is complete, then both at once on a fresh topic. These add what the minimal legs
  leave out: the worker's converters and offset bookkeeping, and the file source's headers
  (path, host, stream, offset, sequence; the sink drops re-sends by stream and sequence).
  Five headers per line cost about as much as everything else together (~2 µs to produce,
  more to read back); ``--lean-headers`` turns three of them off.

``--gc-threshold 50000`` shows what the connectors cost once the cyclic GC is tuned, as
``sluice up`` / ``sluice connect`` do at start (a process-wide choice for the runtime, not
something a connector should change).

The legs drive the connector tasks directly with a minimal loop (no REST, no SMTs, no offset
topic), so they measure the connectors + client + broker; the hub worker's converters,
transforms and offset bookkeeping come on top (the hub rows). Target (issue 4): >= 200k
lines/s per leg.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from confluent_kafka import Consumer, Producer  # noqa: E402
from confluent_kafka import TopicPartition as KafkaTP  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from connectors.file.sink_task import FileSinkTask  # noqa: E402
from connectors.file.source_task import FileSourceTask  # noqa: E402
from hub.api import SinkRecord, SourceRecordBatch, TopicPartition  # noqa: E402

LINE_BYTES = 100
TARGET = 200_000
PRODUCER = {
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 5,
    "batch.size": 1_000_000,
    "batch.num.messages": 10_000,
    "compression.type": "none",
    "queue.buffering.max.messages": 2_000_000,
    "queue.buffering.max.kbytes": 2_097_152,
    "log_level": 3,
}
CONSUMER = {
    "group.id": "file-bench",
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
    "fetch.wait.max.ms": 100,
    "queued.min.messages": 1_000_000,
    "log_level": 3,
}


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


# -- fixtures: input file, broker -------------------------------------------------------------


def make_input(path: Path, lines: int) -> None:
    body = "x" * (LINE_BYTES - 12)
    with open(path, "w") as f:
        for start in range(0, lines, 100_000):
            f.write(
                "".join(f"{i:010d} {body}\n" for i in range(start, min(lines, start + 100_000)))
            )


class Broker:
    """``python -m sluice broker`` on a free port with a temp data dir."""

    def __init__(self, data_dir: Path) -> None:
        self.log_path = data_dir.parent / "broker.log"
        cmd = [sys.executable, "-m", "sluice", "broker", "--data-dir", str(data_dir),
               "--host", "127.0.0.1", "--port", "0",
               # as ``sluice up`` does: one hub, no need to wait for more group members
               "--group-initial-rebalance-delay-ms", "0"]  # fmt: skip
        self.log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        env = dict(os.environ, SLUICE_LOG_LEVEL="WARNING")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, cwd=REPO,
                                     env={**env, "SLUICE_LOG_LEVEL": "INFO"})  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            m = re.search(r"broker listening address=([\d.]+):(\d+)", self.log_path.read_text())
            if m:
                self.bootstrap = f"{m.group(1)}:{m.group(2)}"
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"broker did not start:\n{self.log_path.read_text()}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)


# -- contexts (the hub worker's role, reduced to what the tasks need) -------------------------


class _Offsets:
    def offset(self, partition: Mapping[str, Any]) -> None:
        return None

    def offsets(self, partitions: Any) -> dict[Any, Any]:
        return {}


class _SourceContext:
    offset_reader = _Offsets()
    config: Mapping[str, Any] = {}


class _SinkContext:
    config: Mapping[str, Any] = {}

    def assignment(self) -> set[TopicPartition]:
        return set()

    def pause(self, *p: TopicPartition) -> None: ...
    def resume(self, *p: TopicPartition) -> None: ...
    def offset(self, partition: TopicPartition, offset: int) -> None: ...
    def request_commit(self) -> None: ...


def _source(path: Path) -> FileSourceTask:
    task = FileSourceTask(_SourceContext(), wait=lambda s: None)
    task.start({"file": str(path), "topic": "bench", "poll.interval.ms": "0"})
    return task


# -- measurements -----------------------------------------------------------------------------


def cat_socket(path: Path) -> float:
    """Seconds for ``cat`` to push the file through a loopback TCP socket to a reader."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    received = 0

    def reader() -> None:
        nonlocal received
        conn, _ = server.accept()
        buf = bytearray(1 << 20)
        while n := conn.recv_into(buf):
            received += n
        conn.close()

    t = threading.Thread(target=reader)
    t.start()
    start = time.perf_counter()
    subprocess.run(["bash", "-c", f"cat {path} > /dev/tcp/127.0.0.1/{port}"], check=True)
    t.join()
    elapsed = time.perf_counter() - start
    server.close()
    assert received == path.stat().st_size
    return elapsed


def source_only(path: Path, lines: int) -> float:
    task = _source(path)
    start, n = time.perf_counter(), 0
    while n < lines:
        n += len(task.poll() or [])
    elapsed = time.perf_counter() - start
    task.stop()
    return elapsed


def produce_file(path: Path, lines: int, bootstrap: str, topic: str) -> float:
    task = _source(path)
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER})
    start, n = time.perf_counter(), 0
    while n < lines:
        result = task.poll() or []
        # a batch's values are the lines' bytes (this file is ASCII: what encoding gives)
        values = (
            result.values
            if isinstance(result, SourceRecordBatch)
            else [r.value.encode() for r in result]
        )
        for value in values:
            while True:
                try:
                    producer.produce(topic, value)
                    break
                except BufferError:
                    producer.poll(0.01)
            n += 1
        producer.poll(0)
    if producer.flush(120) != 0:
        raise SystemExit("producer did not deliver everything")
    elapsed = time.perf_counter() - start
    task.stop()
    return elapsed


def produce_raw(path: Path, lines: int, bootstrap: str, topic: str) -> float:
    """The client + broker ceiling for leg 1: the same lines, no source task."""
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER})
    data = path.read_bytes().split(b"\n")[:lines]
    start = time.perf_counter()
    for value in data:
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(120) != 0:
        raise SystemExit("producer did not deliver everything")
    return time.perf_counter() - start


def consume_raw(lines: int, bootstrap: str, topic: str) -> float:
    """The client + broker ceiling for leg 2: consume the topic, no sink task."""
    consumer = Consumer({"bootstrap.servers": bootstrap, **CONSUMER})
    consumer.assign([KafkaTP(topic, 0, 0)])
    start, n = time.perf_counter(), 0
    deadline = time.monotonic() + 300
    while n < lines and time.monotonic() < deadline:
        n += sum(1 for m in consumer.consume(10_000, 0.5) if m.error() is None)
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed


def sink_topic(out_path: Path, lines: int, bootstrap: str, topic: str) -> float:
    task = FileSinkTask(_SinkContext())
    task.start({"file": str(out_path), "topics": topic})
    consumer = Consumer({"bootstrap.servers": bootstrap, **CONSUMER})
    consumer.assign([KafkaTP(topic, 0, 0)])
    tp = TopicPartition(topic, 0)
    start, n = time.perf_counter(), 0
    deadline = time.monotonic() + 300
    while n < lines and time.monotonic() < deadline:
        msgs = consumer.consume(10_000, 0.5)
        batch = [
            SinkRecord(topic=topic, partition=0, offset=m.offset(), value=m.value().decode())
            for m in msgs
            if m.error() is None
        ]
        task.put(batch)
        n += len(batch)
    task.pre_commit({tp: n})
    elapsed = time.perf_counter() - start
    consumer.close()
    task.stop()
    if n < lines:
        raise SystemExit(f"sink got {n} of {lines} lines")
    return elapsed


def end_to_end(path: Path, out_path: Path, lines: int, bootstrap: str, topic: str) -> float:
    errors: list[BaseException] = []

    def run(fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except BaseException as exc:  # reported after join
            errors.append(exc)

    start = time.perf_counter()
    threads = [
        threading.Thread(target=run, args=(sink_topic, out_path, lines, bootstrap, topic)),
        threading.Thread(target=run, args=(produce_file, path, lines, bootstrap, topic)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    return elapsed


class Hub:
    """An in-process Herder + REST app (the worker ``sluice connect`` runs) for the hub rows."""

    def __init__(self, bootstrap: str, lean: bool, files: Path) -> None:
        from fastapi.testclient import TestClient

        from hub.rest import create_app
        from hub.runtime.config import WorkerConfig
        from hub.runtime.herder import Herder

        config = WorkerConfig.from_mapping(
            {"bootstrap.servers": bootstrap, "offset.flush.interval.ms": 1000,
             "key.converter": "org.apache.kafka.connect.storage.StringConverter",
             "value.converter": "org.apache.kafka.connect.storage.StringConverter",
             "rest.auth.token": "bench", "file.allowed.paths": str(files)}
        )  # fmt: skip
        self.bootstrap = bootstrap
        self.lean = lean
        self.herder = Herder(config)
        self.herder.start()
        self.api = TestClient(
            create_app(self.herder, config),
            base_url="http://127.0.0.1:8083",
            headers={"Authorization": "Bearer bench"},
        )

    def create(self, name: str, config: dict[str, str]) -> None:
        response = self.api.post("/connectors", json={"name": name, "config": config})
        if response.status_code != 201:
            raise SystemExit(f"creating {name}: {response.text}")

    def source(self, name: str, path: Path, topic: str) -> None:
        config = {"connector.class": "FileStreamSource", "topic": topic, "file": str(path),
                  "poll.interval.ms": "50"}  # fmt: skip
        if self.lean:
            config |= {"include.host.header": "false", "include.sequence.headers": "false"}
        self.create(name, config)

    def sink(self, name: str, out_path: Path, topic: str) -> None:
        self.create(name, {"connector.class": "FileStreamSink", "topics": topic,
                           "file": str(out_path)})  # fmt: skip

    def stop(self) -> None:
        self.herder.stop()


def _wait_for_file(out_path: Path, size: int) -> None:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if out_path.exists() and out_path.stat().st_size >= size:
            return
        time.sleep(0.01)
    raise SystemExit(f"{out_path} did not reach {size} bytes")


def hub_leg1(hub: Hub, path: Path, lines: int, topic: str) -> float:
    """The file source connector alone (worker converters, headers, offsets, acks=all)."""
    watcher = Consumer({"bootstrap.servers": hub.bootstrap, "group.id": "hub-leg1-watch"})
    start = time.perf_counter()
    hub.source("leg1-source", path, topic)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if watcher.get_watermark_offsets(KafkaTP(topic, 0), 5)[1] >= lines:
            break
        time.sleep(0.01)
    elapsed = time.perf_counter() - start
    watcher.close()
    return elapsed


def hub_leg2(hub: Hub, out_path: Path, size: int, topic: str) -> float:
    """The file sink connector alone, on the topic leg 1 filled (group join included)."""
    start = time.perf_counter()
    hub.sink("leg2-sink", out_path, topic)
    _wait_for_file(out_path, size)
    return time.perf_counter() - start


def hub_end_to_end(hub: Hub, path: Path, out_path: Path, topic: str) -> float:
    """Both connectors at once in one worker: file -> topic -> file."""
    start = time.perf_counter()
    hub.sink("e2e-sink", out_path, topic)
    hub.source("e2e-source", path, topic)
    _wait_for_file(out_path, path.stat().st_size)
    return time.perf_counter() - start


# -- report -----------------------------------------------------------------------------------


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs ({cpu}), {mem:.0f} GiB RAM, load avg {load}, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


class Rows:
    """Result rows; each measurement also records this process's CPU seconds (connector and
    client work, not the broker's), which stays meaningful on a machine busy with other work."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, bool]] = []

    def measure(self, name: str, has_target: bool, fn: Any, *args: Any) -> float | None:
        cpu = time.process_time()
        seconds = fn(*args)
        if seconds is not None:
            self.rows.append((name, seconds, time.process_time() - cpu, has_target))
        return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--skip-hub", action="store_true", help="skip the in-process Herder rows")
    ap.add_argument("--hub-only", action="store_true", help="only the in-process Herder rows")
    ap.add_argument(
        "--hub-leg1-only",
        action="store_true",
        help="only the hub's leg 1 row (the file source connector into the broker)",
    )
    ap.add_argument(
        "--lean-headers",
        action="store_true",
        help="hub rows: file source without the file.host, file.stream and file.seq headers "
        "(include.host.header=false, include.sequence.headers=false)",
    )
    ap.add_argument(
        "--gc-threshold",
        type=int,
        default=0,
        help="gc.set_threshold(N, 20, 50) first: with Python's default (700) the collector "
        "costs the source ~40%% of its CPU on 2,000-record batches (a runtime-level knob)",
    )
    args = ap.parse_args()
    if args.gc_threshold:
        gc.set_threshold(args.gc_threshold, 20, 50)
    lines = args.lines
    tmp = Path(tempfile.mkdtemp(prefix="sluice-file-bench-"))
    r = Rows()
    broker = None
    try:
        src = tmp / "input.log"
        make_input(src, lines)
        broker = Broker(tmp / "data")
        bs = broker.bootstrap
        outs: list[Path] = []
        if not (args.hub_only or args.hub_leg1_only):
            r.measure("cat | loopback socket", False, cat_socket, src)
            r.measure("source task only (no broker)", False, source_only, src, lines)
            for topic in ("raw", "leg", "e2e"):
                create_topic(bs, topic)
            r.measure("producer only (no source task)", False, produce_raw, src, lines, bs, "raw")
            r.measure("leg 1: file source -> broker", True, produce_file, src, lines, bs, "leg")
            r.measure("consumer only (no sink task)", False, consume_raw, lines, bs, "raw")
            outs = [tmp / "leg2.out", tmp / "e2e.out"]
            r.measure("leg 2: broker -> file sink", True, sink_topic, outs[0], lines, bs, "leg")
            r.measure("end to end (both legs, one process)", False, end_to_end, src, outs[1],
                      lines, bs, "e2e")  # fmt: skip
        if not args.skip_hub:
            for topic in ("hub-leg", "hub-e2e"):
                create_topic(bs, topic)
            hub = Hub(bs, args.lean_headers, tmp)
            try:
                size = src.stat().st_size
                r.measure("hub leg 1: file source connector", True, hub_leg1, hub, src, lines,
                          "hub-leg")  # fmt: skip
                if not args.hub_leg1_only:
                    hub_outs = [tmp / "hub-leg2.out", tmp / "hub-e2e.out"]
                    outs += hub_outs
                    r.measure("hub leg 2: file sink connector", True, hub_leg2, hub,
                              hub_outs[0], size, "hub-leg")  # fmt: skip
                    r.measure("hub end to end (both connectors)", False, hub_end_to_end, hub,
                              src, hub_outs[1], "hub-e2e")  # fmt: skip
            finally:
                hub.stop()
        for produced in outs:
            if produced.read_bytes() != src.read_bytes():
                raise SystemExit(f"{produced} differs from the input")
    finally:
        if broker is not None:
            broker.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    mb = lines * LINE_BYTES / 1e6
    out(f"File pipeline: {lines:,} lines x {LINE_BYTES} B ({mb:.0f} MB); outputs verified equal")
    out(f"Machine: {machine()}; gc thresholds {gc.get_threshold()}")
    out("cpu s = CPU seconds of this process (connectors + client; not the broker, not cat)")
    out()
    out(f"{'path':<42} {'seconds':>8} {'lines/s':>11} {'MB/s':>7} {'cpu s':>6} "
        f"{'lines/cpu-s':>11}  target")  # fmt: skip
    for name, seconds, cpu, has_target in r.rows:
        rate = lines / seconds
        per_cpu = f"{lines / cpu:11,.0f}" if cpu > 0.05 else f"{'-':>11}"
        verdict = f">= {TARGET:,}: {'PASS' if rate >= TARGET else 'FAIL'}" if has_target else ""
        out(f"{name:<42} {seconds:8.2f} {rate:11,.0f} {mb / seconds:7.1f} {cpu:6.2f} "
            f"{per_cpu}  {verdict}")  # fmt: skip


if __name__ == "__main__":
    main()
