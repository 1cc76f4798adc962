"""Security benchmark (issue 21): produce and consume over SASL_SSL beside PLAINTEXT, one run.

    .venv/bin/python bench/security_bench.py            # 300k messages per phase, 3 rounds
    .venv/bin/python bench/security_bench.py --quick    # 100k messages, 2 rounds

One Sluice broker (subprocess, free loopback ports, temp data dir, certificates made for the
run) with a PLAINTEXT and a SASL_SSL listener; a SCRAM-SHA-512 user. The same confluent-kafka
producer and consumer settings as bench/broker_bench.py (100-byte values, 4 partitions, acks=1,
assign-based consumption), once per listener: the difference is TLS record encryption on both
ends plus the one-time SCRAM login. Phases alternate between the listeners each round (the
machine is shared; load moves throughput between minutes) and the target is judged on the
median of the paired ratios. Target: SASL_SSL >= 50% of PLAINTEXT, produce and consume.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the certificates of the tests

from _common import CpuMeter, machine_summary
from _kafka import CONSUMER_CONFIG, PAYLOAD, PRODUCER_CONFIG, SluiceBroker, data_root
from confluent_kafka import Consumer, Producer, TopicPartition
from rich.console import Console
from rich.table import Table

from tests.fixtures.secure_broker import create_scram_user
from tests.fixtures.tls import make_tls_files

PARTITIONS = 4
TARGET = 0.5
USER, PASSWORD = "bench", "bench-secret"

err = Console(stderr=True)


def produce(settings: dict[str, object], topic: str, count: int) -> float:
    p = Producer(dict(PRODUCER_CONFIG, **settings, **{"acks": 1, "log_level": 0}))
    p.list_topics(timeout=10)  # connect (and log in) before the clock starts
    start = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                p.produce(topic, PAYLOAD)
                break
            except BufferError:
                p.poll(0.005)
    if p.flush(120):
        raise RuntimeError("produce did not finish")
    return count / (time.perf_counter() - start)


def consume(settings: dict[str, object], topic: str, count: int) -> float:
    group = {"log_level": 0, "group.id": f"b-{uuid.uuid4().hex[:8]}"}
    conf = dict(CONSUMER_CONFIG, **settings, **group)
    c = Consumer(conf)
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got, first, last = 0, None, 0.0
        deadline = time.monotonic() + 300
        while got < count and time.monotonic() < deadline:
            batch = c.consume(10_000, 0.5)
            now = time.perf_counter()
            got += sum(1 for m in batch if m.error() is None)
            if batch:
                first = now if first is None else first
                last = now
        return got / max(last - (first or last), 1e-9)
    finally:
        c.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="100k messages, 2 rounds")
    ap.add_argument("--messages", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args(argv)
    count = args.messages or (100_000 if args.quick else 300_000)
    rounds = args.rounds or (2 if args.quick else 3)
    tls = make_tls_files(Path(tempfile.mkdtemp(prefix="sluice-bench-tls-")))
    load_before = os.getloadavg()
    meter = CpuMeter()
    broker = SluiceBroker(data_root=data_root(), extra_args=(
        "-o", "listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        "-o", "sasl.enabled.mechanisms=SCRAM-SHA-512",
        "-o", f"listener.name.sasl_ssl.ssl.keystore.location={tls.server_keystore}",
    ))  # fmt: skip
    rates: dict[str, dict[str, list[float]]] = {
        "produce": {"PLAINTEXT": [], "SASL_SSL": []},
        "consume": {"PLAINTEXT": [], "SASL_SSL": []},
    }
    try:
        sasl_port = re.search(r"SASL_SSL://127\.0\.0\.1:(\d+)", broker.log_path.read_text())
        assert sasl_port, "no SASL_SSL listener in the broker log"
        create_scram_user(broker.bootstrap, USER, PASSWORD)
        settings = {
            "PLAINTEXT": {"bootstrap.servers": broker.bootstrap},
            "SASL_SSL": {
                "bootstrap.servers": f"127.0.0.1:{sasl_port.group(1)}",
                "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.username": USER, "sasl.password": PASSWORD,
                "ssl.ca.location": str(tls.ca),
            },
        }  # fmt: skip
        for r in range(rounds):
            order = ["PLAINTEXT", "SASL_SSL"] if r % 2 == 0 else ["SASL_SSL", "PLAINTEXT"]
            for listener in order:
                topic = f"sec-{listener.lower()}-{r}"
                broker.create_topics([(topic, PARTITIONS)], 30)
                rate = produce(settings[listener], topic, count)
                rates["produce"][listener].append(rate)
                err.print(f"round {r + 1}: produce {listener}: {rate:,.0f} msgs/s")
            for listener in order[::-1]:
                topic = f"sec-{listener.lower()}-{r}"
                rate = consume(settings[listener], topic, count)
                rates["consume"][listener].append(rate)
                err.print(f"round {r + 1}: consume {listener}: {rate:,.0f} msgs/s")
    finally:
        broker.close()
    load_after = os.getloadavg()
    foreign = meter.foreign_cores()
    table = Table(title="Sluice over SASL_SSL vs PLAINTEXT (confluent-kafka, 100-byte messages, "
                        "4 partitions, SCRAM-SHA-512)")  # fmt: skip
    for col in ("workload", "listener", "msgs/s (median)", "each round", "ratio (paired)",
                "target"):  # fmt: skip
        table.add_column(col)
    met = True
    for workload, by_listener in rates.items():
        plain, secure = by_listener["PLAINTEXT"], by_listener["SASL_SSL"]
        ratio = statistics.median(s / p for s, p in zip(secure, plain, strict=True) if p)
        met &= ratio >= TARGET
        for listener, values in by_listener.items():
            is_secure = listener == "SASL_SSL"
            table.add_row(
                workload, listener, f"{statistics.median(values):,.0f}",
                ", ".join(f"{v:,.0f}" for v in values),
                f"{ratio:.2f} of PLAINTEXT" if is_secure else "1.00",
                (f">= {TARGET:.0%}: {'met' if ratio >= TARGET else 'NOT met'}"
                 if is_secure else ""),
            )  # fmt: skip
    Console().print(table)
    others = f"{foreign:.2f} cores" if foreign is not None else "an unknown share of the CPU"
    Console().print(
        f"machine: {machine_summary(data_root())}; load average before {load_before[0]:.2f}, "
        f"after {load_after[0]:.2f}; other processes used {others} on average"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
