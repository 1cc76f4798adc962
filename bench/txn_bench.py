"""Transactions benchmark (issue 22): one command, one table, every figure from the same run.

    .venv/bin/python bench/txn_bench.py            # 300k messages per phase, 3 rounds, ~3 min
    .venv/bin/python bench/txn_bench.py --quick    # 100k messages, 2 rounds, ~1 min

What it measures against one Sluice broker it starts (free loopback port, temp data dir):

- produce: confluent-kafka's idempotent producer (the baseline: transactions add the
  coordinator round trips and markers on top of exactly this), then a transactional producer
  committing every 1,000 and every 100 messages. Four partitions, 100-byte values, the same
  client settings as bench/broker_bench.py. Rate = messages / time until the last commit (or
  flush) returned, so every message counted is committed.
- consume: the same topic of committed transactional data read with
  ``isolation.level=read_uncommitted`` and ``read_committed`` (same records delivered: the
  difference is the broker bounding reads at the LSO and listing aborted transactions, and the
  client filtering). A third row reads a topic where every tenth transaction aborted, for
  information.

Phases alternate (idempotent, txn/1000, txn/100 in a rotating order each round; uncommitted
and committed reads alternating) because the machine is shared: load moves throughput by up
to 2x between minutes. Each target is judged on the median of the *paired* ratios (the two
phases of one round ran back to back). The load average and the CPU other processes took are
printed with the table.
Targets: transactional at 1,000/txn >= 50% of idempotent; read_committed >= 80% of
read_uncommitted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import CpuMeter, machine_summary
from _kafka import CONSUMER_CONFIG, PAYLOAD, PRODUCER_CONFIG, SluiceBroker, data_root
from confluent_kafka import Consumer, Producer, TopicPartition
from rich.console import Console
from rich.table import Table

PARTITIONS = 4
TXN_SHARE_TARGET = 0.5
READ_COMMITTED_TARGET = 0.8

err = Console(stderr=True)


def produce(bootstrap: str, topic: str, count: int, per_txn: int | None,
            abort_every: int = 0) -> float:  # fmt: skip
    """Messages per second; ``per_txn`` None = idempotent, else transactions of that size
    (every ``abort_every``-th one aborted when set)."""
    conf = dict(PRODUCER_CONFIG, **{"bootstrap.servers": bootstrap, "log_level": 0})
    if per_txn is None:
        conf["enable.idempotence"] = True
    else:
        conf["transactional.id"] = f"bench-{uuid.uuid4().hex[:8]}"
    p = Producer(conf)
    if per_txn is not None:
        p.init_transactions(30)
    start = time.perf_counter()
    sent, txns = 0, 0
    while sent < count:
        n = min(per_txn or 10_000, count - sent)
        if per_txn is not None:
            p.begin_transaction()
        for _ in range(n):
            while True:
                try:
                    p.produce(topic, PAYLOAD)
                    break
                except BufferError:
                    p.poll(0.005)
        sent += n
        txns += 1
        if per_txn is None:
            p.poll(0)
        elif abort_every and txns % abort_every == 0:
            p.flush(60)
            p.abort_transaction(60)
        else:
            p.commit_transaction(60)
    if per_txn is None and p.flush(60):
        raise RuntimeError("idempotent produce did not finish")
    return count / (time.perf_counter() - start)


def consume(bootstrap: str, topic: str, isolation: str) -> tuple[float, int]:
    """(records delivered per second, records) reading ``topic`` from its start to its end."""
    conf = dict(CONSUMER_CONFIG, **{"bootstrap.servers": bootstrap, "log_level": 0,
                                    "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                                    "isolation.level": isolation,
                                    "enable.partition.eof": True})  # fmt: skip
    c = Consumer(conf)
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        done: set[int] = set()
        got = 0
        first: float | None = None
        last = 0.0
        deadline = time.monotonic() + 300
        while len(done) < PARTITIONS and time.monotonic() < deadline:
            batch = c.consume(10_000, 0.5)
            if not batch:
                continue
            now = time.perf_counter()
            for m in batch:
                e = m.error()
                if e is None:
                    got += 1
                elif e.code() == -191:  # _PARTITION_EOF
                    done.add(m.partition())
            first = now if first is None else first
            last = now
        return got / max(last - first, 1e-9) if first is not None else 0.0, got
    finally:
        c.close()


def create(broker: SluiceBroker, topic: str) -> None:
    broker.create_topics([(topic, PARTITIONS)], 30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="100k messages, 2 rounds")
    ap.add_argument("--messages", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args(argv)
    count = args.messages or (100_000 if args.quick else 300_000)
    rounds = args.rounds or (2 if args.quick else 3)
    load_before = os.getloadavg()
    meter = CpuMeter()
    broker = SluiceBroker(data_root=data_root())
    produce_rates: dict[str, list[float]] = {"idempotent": [], "txn/1000": [], "txn/100": []}
    read_rates: dict[str, list[float]] = {"read_uncommitted": [], "read_committed": []}
    aborted_rates: list[float] = []
    try:
        kinds: list[tuple[str, int | None]] = [
            ("idempotent", None), ("txn/1000", 1000), ("txn/100", 100)
        ]  # fmt: skip
        for r in range(rounds):
            order = kinds[r % 3 :] + kinds[: r % 3]
            for name, per_txn in order:
                topic = f"p-{name.replace('/', '-')}-{r}"
                create(broker, topic)
                rate = produce(broker.bootstrap, topic, count, per_txn)
                produce_rates[name].append(rate)
                err.print(f"round {r + 1}: produce {name}: {rate:,.0f} msgs/s")
        committed_topic, aborted_topic = "c-committed", "c-aborted"
        create(broker, committed_topic)
        produce(broker.bootstrap, committed_topic, count, 1000)
        create(broker, aborted_topic)
        produce(broker.bootstrap, aborted_topic, count, 1000, abort_every=10)
        for r in range(rounds):
            isolations = ["read_uncommitted", "read_committed"]
            for isolation in isolations if r % 2 == 0 else isolations[::-1]:
                rate, got = consume(broker.bootstrap, committed_topic, isolation)
                read_rates[isolation].append(rate)
                err.print(f"round {r + 1}: consume {isolation}: {rate:,.0f} msgs/s ({got:,})")
            rate, got = consume(broker.bootstrap, aborted_topic, "read_committed")
            aborted_rates.append(rate)
            err.print(f"round {r + 1}: read_committed, 10% aborted: {rate:,.0f} msgs/s ({got:,})")
    finally:
        broker.close()
    load_after = os.getloadavg()
    foreign = meter.foreign_cores()

    def med(xs: list[float]) -> float:
        return statistics.median(xs) if xs else 0.0

    def paired(a: list[float], b: list[float]) -> float:
        return med([x / y for x, y in zip(a, b, strict=True) if y])

    def verdict(ratio: float, target: float) -> str:
        return f">= {target:.0%}: {'met' if ratio >= target else 'NOT met'}"

    idem = produce_rates["idempotent"]
    txn_ratio = paired(produce_rates["txn/1000"], idem)
    read_ratio = paired(read_rates["read_committed"], read_rates["read_uncommitted"])
    rows = [
        ("produce, idempotent", idem, "1.00", ""),
        ("produce, transactional, 1,000/txn", produce_rates["txn/1000"],
         f"{txn_ratio:.2f} of idempotent", verdict(txn_ratio, TXN_SHARE_TARGET)),
        ("produce, transactional, 100/txn", produce_rates["txn/100"],
         f"{paired(produce_rates['txn/100'], idem):.2f} of idempotent", ""),
        ("consume, read_uncommitted", read_rates["read_uncommitted"], "1.00", ""),
        ("consume, read_committed", read_rates["read_committed"],
         f"{read_ratio:.2f} of uncommitted", verdict(read_ratio, READ_COMMITTED_TARGET)),
        ("consume, read_committed, 10% of txns aborted", aborted_rates,
         "(records delivered/s)", ""),
    ]  # fmt: skip
    table = Table(title="Sluice transactions (confluent-kafka, 100-byte messages, 4 partitions)")
    for col in ("workload", "msgs/s (median)", "each round", "ratio (paired median)", "target"):
        table.add_column(col)
    for name, rates, ratio, target in rows:
        table.add_row(name, f"{med(rates):,.0f}", ", ".join(f"{x:,.0f}" for x in rates), ratio,
                      target)  # fmt: skip
    console = Console(width=max(Console().width, 120))
    console.print(table)
    console.print(f"machine: {machine_summary(data_root())}")
    console.print(
        f"load average before {load_before[0]:.2f} / after {load_after[0]:.2f} (1 min); "
        f"other processes used {foreign:.2f} cores on average during the run"
        if foreign is not None
        else f"load average before {load_before[0]:.2f} / after {load_after[0]:.2f}"
    )
    console.print(f"{count:,} messages per phase, {rounds} rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
