"""What the broker's Prometheus metrics cost on the produce path: metrics off vs on, one run.

    .venv/bin/python bench/metrics_bench.py              # 8 rounds of 1M messages per broker
    .venv/bin/python bench/metrics_bench.py --quick      # 6 rounds of 300k
    .venv/bin/python bench/metrics_bench.py --batch-messages 100   # many small requests

Two brokers run side by side, one without a metrics port (no counting at all) and one with
``--metrics-port`` and a scraper fetching ``/metrics`` every ``--scrape-interval`` seconds
(harsher than Prometheus's usual 15 s). The same confluent-kafka produce phase (100-byte
messages, acks=1, 8 partitions, the settings of ``broker_bench.py``) alternates between them
round after round, so background load hits both alike. Two figures:

- throughput: the median over rounds of on/off for the two back-to-back phases of a round
  (a paired ratio: slow drifts of the machine's load cancel within a pair);
- broker CPU per message: each broker process's CPU time (``/proc/<pid>/stat``) over all its
  rounds divided by the messages it took, scrapes included. On a shared machine this is the
  steadier figure: other processes slow a broker down, but do not make it use more CPU.

Target: < 3% overhead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _kafka
from _common import CpuMeter, free_port, machine_summary

TARGET_OVERHEAD = 3.0
_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of a process (fields 14 and 15 of /proc/<pid>/stat)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _scraper(url: str, interval: float, stop: threading.Event, counts: list[int]) -> None:
    while not stop.wait(interval):
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                response.read()
            counts[0] += 1
        except OSError:
            counts[1] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--scrape-interval", type=float, default=1.0)
    parser.add_argument(
        "--batch-messages", type=int, default=None,
        help="batch.num.messages of the producer (default broker_bench's 10000); small "
        "batches mean many requests, the worst case for per-request timing",
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="6 rounds of 300k messages")
    args = parser.parse_args()
    if args.quick:
        args.messages, args.rounds = 300_000, 6
    if args.batch_messages is not None:
        _kafka.PRODUCER_CONFIG["batch.num.messages"] = args.batch_messages
    batch = _kafka.PRODUCER_CONFIG["batch.num.messages"]
    root = _kafka.data_root()
    meter = CpuMeter()
    load_before = os.getloadavg()
    metrics_port = free_port()
    off = _kafka.SluiceBroker(data_root=root)
    on = _kafka.SluiceBroker(data_root=root, extra_args=("--metrics-port", str(metrics_port)))
    stop, counts = threading.Event(), [0, 0]
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    scraper = threading.Thread(target=_scraper, args=(url, args.scrape_interval, stop, counts))
    rates: dict[str, list[float]] = {"off": [], "on": []}
    cpu = {"off": 0.0, "on": 0.0}
    delivered = {"off": 0, "on": 0}
    try:
        for name, broker in (("off", off), ("on", on)):
            broker.create_topics([(f"metrics-bench-{name}", args.partitions)])
        scraper.start()
        for round_no in range(args.rounds):
            order = (("off", off), ("on", on)) if round_no % 2 == 0 else (("on", on), ("off", off))
            for name, broker in order:
                deadline = time.monotonic() + 120
                cpu0 = _cpu_s(broker.pid)
                result = _kafka.produce_throughput(
                    broker.bootstrap, f"metrics-bench-{name}", args.messages, "1", deadline
                )
                cpu[name] += _cpu_s(broker.pid) - cpu0
                delivered[name] += result.delivered
                if result.errors or result.capped:
                    print(f"round {round_no} {name}: {result.first_error or 'capped'}",
                          file=sys.stderr)  # fmt: skip
                rates[name].append(result.rate)
                print(f"round {round_no} metrics {name:>3}: {result.rate:>10,.0f} msg/s",
                      file=sys.stderr)  # fmt: skip
    finally:
        stop.set()
        if scraper.is_alive():
            scraper.join(10)
        off.close()
        on.close()
    foreign = meter.foreign_cores()
    med_off, med_on = statistics.median(rates["off"]), statistics.median(rates["on"])
    paired = statistics.median(on / off for on, off in zip(rates["on"], rates["off"], strict=True))
    overhead = (1 - paired) * 100
    us_off = cpu["off"] / max(delivered["off"], 1) * 1e6
    us_on = cpu["on"] / max(delivered["on"], 1) * 1e6
    cpu_overhead = (us_on - us_off) / us_off * 100 if us_off else 0.0
    verdict = "meets" if cpu_overhead < TARGET_OVERHEAD else "MISSES"
    load_after = os.getloadavg()
    print(f"Broker produce, metrics off vs on ({args.rounds} alternating rounds of "
          f"{args.messages:,} x 100 B, acks=1, {args.partitions} partitions, batches of up to "
          f"{batch} messages; "
          f"/metrics scraped every {args.scrape_interval:g} s: {counts[0]} scrapes, "
          f"{counts[1]} failed)")  # fmt: skip
    print(f"  metrics off: median {med_off:>10,.0f} msg/s, broker CPU {us_off:.3f} µs/msg")
    print(f"  metrics on:  median {med_on:>10,.0f} msg/s, broker CPU {us_on:.3f} µs/msg")
    print(f"  overhead: broker CPU per message {cpu_overhead:+.1f}% (target < "
          f"{TARGET_OVERHEAD:g}%: {verdict}); throughput {overhead:+.1f}% (median paired "
          f"on/off of {args.rounds} rounds: noisy on a busy machine)")  # fmt: skip
    print(f"  machine: {machine_summary(root)}")
    foreign_s = f"{foreign:.2f}" if foreign is not None else "unknown"
    print(f"  load average before {load_before[0]:.2f}, after {load_after[0]:.2f}; other "
          f"processes used {foreign_s} cores on average during the run")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
