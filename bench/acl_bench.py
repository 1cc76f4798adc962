"""ACL authorizer cost on the produce path (issue 21): authorizer off vs on with 1,000 ACLs.

    .venv/bin/python bench/acl_bench.py            # 300k messages per phase, 6 rounds
    .venv/bin/python bench/acl_bench.py --quick    # 100k messages, 2 rounds
    .venv/bin/python bench/acl_bench.py --batch-messages 100   # many small requests

Two Sluice brokers run side by side (free loopback ports, temp data dirs): one without
``authorizer.class.name``, one with it and 1,000 ACLs (900 LITERAL topic ACLs of other users,
99 PREFIXED ones, and the one ALLOW that lets the producer write its topic), created through
CreateAcls as any admin would. The producer is the same confluent-kafka setup as
bench/broker_bench.py (acks=1, 100-byte values, four partitions). Phases alternate (off, on /
on, off ...) because the machine is shared; the figure is the median of the paired ratios
on/off. Because throughput on a shared 2-core machine moves by 2x between minutes, the bench
also measures the broker's own CPU time per acknowledged message (from /proc, summed over all
rounds), which other processes barely disturb; that figure decides the verdict. Target: the
authorizer costs < 5% of the produce path.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _kafka
from _common import CpuMeter, machine_summary
from _kafka import SluiceBroker, data_root, produce_throughput
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from rich.console import Console
from rich.table import Table

PARTITIONS = 4
TARGET = 0.05
AUTHORIZER = [
    "--override", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
    # only to bootstrap: the first client grants itself cluster ALTER, then 1,000 ACLs exist
    "--override", "allow.everyone.if.no.acl.found=true",
]  # fmt: skip

err = Console(stderr=True)
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of a process (fields 14 and 15 of /proc/<pid>/stat)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def add_acls(bootstrap: str, topic: str) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    allow, deny = AclPermissionType.ALLOW, AclPermissionType.DENY
    literal, prefixed = ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED
    me = "User:ANONYMOUS"
    first = [AclBinding(ResourceType.BROKER, "kafka-cluster", literal, me, "*", op, allow)
             for op in (AclOperation.ALTER, AclOperation.CREATE)]  # fmt: skip
    for f in admin.create_acls(first).values():
        f.result(30)
    acls = [
        AclBinding(ResourceType.TOPIC, f"other-{i}", literal, f"User:u{i % 50}", "*",
                   AclOperation.WRITE, allow if i % 7 else deny)
        for i in range(900)
    ]  # fmt: skip
    acls += [AclBinding(ResourceType.TOPIC, f"team{i}-", prefixed, f"User:t{i}", "*",
                        AclOperation.READ, allow) for i in range(97)]  # fmt: skip
    acls.append(AclBinding(ResourceType.TOPIC, topic, literal, me, "*", AclOperation.ALL, allow))
    for f in admin.create_acls(acls).values():
        f.result(30)
    return len(first) + len(acls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--batch-messages", type=int, default=None,
        help="batch.num.messages of the producer (default broker_bench's 10000); the authorizer "
        "costs per request, so small batches are its worst case",
    )  # fmt: skip
    args = parser.parse_args()
    if args.batch_messages is not None:
        _kafka.PRODUCER_CONFIG["batch.num.messages"] = args.batch_messages
    count, rounds = (100_000, 2) if args.quick else (300_000, 6)
    root = data_root()
    meter = CpuMeter()
    off = SluiceBroker(data_root=root)
    on = SluiceBroker(data_root=root, extra_args=tuple(AUTHORIZER))
    try:
        topic = "acl-bench"
        n_acls = add_acls(on.bootstrap, topic)
        for b in (off, on):
            b.create_topics([(topic, PARTITIONS)])
        rates: dict[str, list[float]] = {"off": [], "on": []}
        cpu = {"off": 0.0, "on": 0.0}
        delivered = {"off": 0, "on": 0}
        for r in range(rounds):
            order = [("off", off), ("on", on)] if r % 2 == 0 else [("on", on), ("off", off)]
            for name, b in order:
                deadline = time.monotonic() + 300
                cpu0 = cpu_s(b.pid)
                res = produce_throughput(b.bootstrap, topic, count, "1", deadline)
                cpu[name] += cpu_s(b.pid) - cpu0
                delivered[name] += res.delivered
                if res.errors:
                    raise SystemExit(f"{name}: {res.errors} errors, first: {res.first_error}")
                rates[name].append(res.rate)
                err.print(f"round {r + 1} authorizer {name}: {res.rate:,.0f} msg/s")
    finally:
        off.close()
        on.close()
    ratios = [a / b for a, b in zip(rates["on"], rates["off"], strict=True)]
    throughput_cost = 1 - statistics.median(ratios)
    us = {name: cpu[name] / max(delivered[name], 1) * 1e6 for name in cpu}
    cost = us["on"] / us["off"] - 1 if us["off"] else 0.0
    batch = _kafka.PRODUCER_CONFIG["batch.num.messages"]
    table = Table(title=f"Produce path, authorizer off vs on ({n_acls} ACLs), "
                  f"{count:,} x 100 B per phase, batches of up to {batch}")  # fmt: skip
    for col in ("phase", "msg/s (median)", "rounds"):
        table.add_column(col)
    for name in ("off", "on"):
        table.add_row(f"authorizer {name}", f"{statistics.median(rates[name]):,.0f}",
                      ", ".join(f"{x:,.0f}" for x in rates[name]))  # fmt: skip
    table.add_row("throughput cost (median paired)", f"{throughput_cost:+.1%}", "noisy")
    table.add_row("broker CPU per message", f"off {us['off']:.2f} us, on {us['on']:.2f} us",
                  f"cost {cost:+.1%} (target < {TARGET:.0%})")  # fmt: skip
    Console().print(table)
    foreign = meter.foreign_cores()
    print(machine_summary(root))
    others = f"{foreign:.2f} cores on average" if foreign is not None else "unknown CPU"
    print(f"load average {os.getloadavg()[0]:.2f}; other processes used {others}")
    print("PASS" if cost < TARGET else "FAIL",
          f"authorizer cost {cost:+.1%} of broker CPU per message (target < 5%)")  # fmt: skip


if __name__ == "__main__":
    main()
