"""Cluster benchmark (issue 19): what replication costs and how fast failover is, in one run.

    .venv/bin/python bench/cluster_bench.py            # ~3 minutes on 2 cores
    .venv/bin/python bench/cluster_bench.py --quick    # ~1.5 minutes
    .venv/bin/python bench/cluster_bench.py --latency-only   # the latency rows, ~1 minute

On one machine, in one run:

- produce throughput, 100-byte messages, confluent-kafka: RF=3 acks=all on three brokers
  (ZooKeeper + ``sluice broker`` children) beside RF=1 acks=1 on one single-node broker;
- end-to-end latency p50/p99 at 10k msgs/s for both, with ``linger.ms=0`` and with ``linger.ms=5``
  (the old default), beside Redis Streams and NATS JetStream when they listen on their default
  ports (``bench/_peers.py``; a missing peer is a row with the reason);
- failover: time from a partition leader's kill -9 to the first acknowledged produce on that
  partition (bounded below by the 6 s ZooKeeper session timeout), and the same after SIGTERM
  (controlled shutdown).

Every figure is printed beside the machine's limits and how busy the rest of the machine was
while it ran (the machine is shared). Targets from the issue are printed with each figure.
"""

from __future__ import annotations

import argparse
import os
import signal
import struct
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _kafka
import _peers
from _common import MESSAGE_SIZE, Budget, CpuMeter, Row, machine_summary
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from rich.console import Console
from rich.table import Table

from broker.config import BrokerConfig
from sluice.broker_process import BrokerProcess
from sluice.local_cluster import LocalCluster

RATE = 10_000
_STAMP = struct.Struct(">qq")


@dataclass
class Latency:
    p50: float
    p99: float
    received: int
    sent: int


def create_topic(bootstrap: str, name: str, rf: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, rf)])[name].result(30)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "probe"})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        md = consumer.list_topics(name, timeout=5).topics.get(name)
        parts = md.partitions if md is not None else {}
        if parts and parts[0].leader >= 0 and len(parts[0].isrs) == rf:
            break
        time.sleep(0.1)
    consumer.close()


def throughput(bootstrap: str, topic: str, count: int, acks: str) -> float:
    result = _kafka.produce_throughput(bootstrap, topic, count, acks, time.monotonic() + 120)
    return result.rate


def latency(bootstrap: str, topic: str, acks: str, linger_ms: int, seconds: float) -> Latency:
    """Paced 10k msgs/s; receive time - send time on one clock (producer and consumer here)."""
    consumer = Consumer(
        {
            **_kafka.CONSUMER_CONFIG,
            "bootstrap.servers": bootstrap,
            "group.id": f"lat-{uuid.uuid4().hex[:6]}",
            "fetch.wait.max.ms": 100,
        }
    )
    consumer.assign([TopicPartition(topic, 0, _kafka.OFFSET_END)])
    ready_by = time.monotonic() + 5
    while time.monotonic() < ready_by:
        consumer.poll(0.1)
        pos = consumer.position([TopicPartition(topic, 0)])
        if pos and pos[0].offset >= 0:
            break
    samples: list[float] = []
    received = [0]
    stop = threading.Event()
    warm = int(RATE * 1.0)

    def consume() -> None:
        while not stop.is_set():
            msg = consumer.poll(0.05)
            if msg is None or msg.error() is not None:
                continue
            now = time.perf_counter_ns()
            sent_ns, seq = _STAMP.unpack_from(msg.value())
            received[0] += 1
            if seq >= warm:
                samples.append((now - sent_ns) / 1e6)

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": linger_ms, "log_level": 3}
    )
    pad = b"x" * (MESSAGE_SIZE - _STAMP.size)
    total = int(RATE * (seconds + 1))
    sent = 0
    start = time.perf_counter()
    while sent < total:
        due = min(total, int((time.perf_counter() - start) * RATE))
        while sent < due:
            producer.produce(topic, _STAMP.pack(time.perf_counter_ns(), sent) + pad)
            sent += 1
        producer.poll(0)
        time.sleep(0.0002)
    producer.flush(10)
    end = time.monotonic() + 3
    while received[0] < sent and time.monotonic() < end:
        time.sleep(0.02)
    stop.set()
    thread.join(5)
    consumer.close()
    values = sorted(samples)

    def pct(q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")

    return Latency(pct(0.5), pct(0.99), received[0], sent)


def leader_of(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "probe"})
    try:
        return int(consumer.list_topics(topic, timeout=10).topics[topic].partitions[0].leader)
    finally:
        consumer.close()


def failover(cluster: LocalCluster, topic: str, sig: signal.Signals) -> tuple[float, int]:
    """Seconds from signalling the partition leader to the first acknowledged produce."""
    bootstrap = cluster.bootstrap
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 0,
            "message.timeout.ms": 60_000,
            "retry.backoff.ms": 20,
            "retry.backoff.max.ms": 100,
            "topic.metadata.refresh.interval.ms": 500,
            "log_level": 0,
        }
    )
    producer.produce(topic, b"warm-up")
    producer.flush(30)
    leader = leader_of(bootstrap, topic)
    victim = cluster.brokers[leader - 1]
    assert victim.pid is not None
    t0 = time.monotonic()
    os.kill(victim.pid, sig)
    acked: list[float] = []
    producer.produce(
        topic, b"after", on_delivery=lambda e, m: e is None and acked.append(time.monotonic())
    )
    producer.flush(60)
    if sig == signal.SIGTERM:
        victim.stop()  # reap it
    return (acked[0] - t0 if acked else float("nan")), leader


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer messages, shorter runs")
    parser.add_argument("--messages", type=int, default=None)
    parser.add_argument(
        "--latency-only",
        action="store_true",
        help="only the end-to-end latency rows (Sluice, Redis Streams, NATS JetStream)",
    )
    args = parser.parse_args(argv)
    count = args.messages or (100_000 if args.quick else 300_000)
    lat_s = 3.0 if args.quick else 5.0
    console = Console()
    root = Path(tempfile.mkdtemp(prefix="sluice-cluster-bench-"))
    meter = CpuMeter()
    rows: list[tuple[str, str, str, str]] = []
    single = BrokerProcess(BrokerConfig(data_dir=root / "single", port=0))
    single.start()
    cluster = LocalCluster(root / "cluster", "127.0.0.1", 0, 3, _free_port(), "WARNING")
    cluster.start()
    try:
        console.print(f"[dim]machine: {machine_summary(str(root))}[/dim]")
        t1, t3 = "single-rf1", "cluster-rf3"
        create_topic(single.bootstrap, t1, 1)
        create_topic(cluster.bootstrap, t3, 3)
        if not args.latency_only:
            r1 = throughput(single.bootstrap, t1, count, "1")
            r3 = throughput(cluster.bootstrap, t3, count, "all")
            rows.append(("produce, 1 broker, RF=1 acks=1", f"{r1:,.0f} msgs/s", "", ""))
            rows.append(
                (
                    "produce, 3 brokers, RF=3 acks=all",
                    f"{r3:,.0f} msgs/s",
                    f"{r3 / r1:.0%} of RF=1",
                    ">= 40%",
                )
            )
        for linger in (0, 5):
            for name, bs, topic, acks, target in (
                ("1 broker acks=1", single.bootstrap, t1, "1", "< 5 ms" if linger == 0 else ""),
                ("RF=3 acks=all", cluster.bootstrap, t3, "all", "< 15 ms" if linger == 0 else ""),
            ):
                lat = latency(bs, topic, acks, linger, lat_s)
                rows.append(
                    (
                        f"e2e @10k/s, {name}, linger.ms={linger}",
                        f"p50 {lat.p50:.1f} ms",
                        f"p99 {lat.p99:.1f} ms",
                        f"p99 {target}" if target else "",
                    )
                )
        budget = Budget(total_s=120, phase_cap_s=30)
        for peer in ("Redis Streams", "NATS JetStream"):
            row: Row = _peers.peer_latency(peer, RATE, lat_s, 1.0, budget)[0]
            if row.p50_ms is None:
                rows.append((f"e2e @10k/s, {peer}", row.note, "", ""))
            else:
                rows.append(
                    (
                        f"e2e @10k/s, {peer}",
                        f"p50 {row.p50_ms:.1f} ms",
                        f"p99 {row.p99_ms:.1f} ms",
                        "",
                    )
                )
        if not args.latency_only:
            failovers(cluster, rows)
    finally:
        cluster.stop()
        single.stop()
    table = Table(title="Sluice cluster benchmark (100-byte messages, confluent-kafka)")
    for col in ("workload", "figure", "detail", "target"):
        table.add_column(col)
    for r in rows:
        table.add_row(*r)
    console.print(table)
    busy = meter.foreign_cores()
    load = os.getloadavg()
    console.print(
        f"other processes kept {busy:.2f} of {os.cpu_count()} cores busy during the run; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        if busy is not None
        else ""
    )
    return 0


def failovers(cluster: LocalCluster, rows: list[tuple[str, str, str, str]]) -> None:
    fo = "failover"
    create_topic(cluster.bootstrap, fo, 3)
    kill_s, killed = failover(cluster, fo, signal.SIGKILL)
    rows.append(
        (
            "failover after kill -9 (6 s ZK session)",
            f"{kill_s:.2f} s",
            f"leader was broker {killed}",
            "< 10 s",
        )
    )
    # the killed broker stays down; two remain: SIGTERM the new leader
    term_s, stopped = failover(cluster, fo, signal.SIGTERM)
    rows.append(
        (
            "failover after SIGTERM (controlled shutdown)",
            f"{term_s:.2f} s",
            f"leader was broker {stopped}",
            "< 1 s",
        )
    )


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


if __name__ == "__main__":
    sys.exit(main())
