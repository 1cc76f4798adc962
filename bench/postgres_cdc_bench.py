"""PostgreSQL CDC benchmark: row changes committed in PostgreSQL -> readable in the topic.

    .venv/bin/python bench/postgres_cdc_bench.py                 # 1,000,000 rows (~2 minutes)
    .venv/bin/python bench/postgres_cdc_bench.py --rows 200000   # quicker

Everything runs on this machine, started by the script: a throwaway PostgreSQL cluster
(``wal_level=logical``, as the tests start it) and a real hub (``python -m sluice up``: broker,
worker, REST API). The connector is created by POSTing a Debezium config to the REST API, with
the JSON converter and ``schemas.enable=true`` (Debezium's usual setup), so every figure
includes the whole path: pgoutput decoding, the connector, converters, the idempotent
producer and the broker. A confluent-kafka consumer reads the topic and stamps each record.

Phases (rows are inserted in transactions of 1,000 rows, ids tell which transaction):

- ``steady``: 5,000 rows/s (five 1,000-row commits a second) for ``--steady-seconds``;
  latency = time the consumer reads a record - time its transaction's COMMIT returned.
- ``full speed``: ``--rows`` rows committed as fast as PostgreSQL takes them; events/s = rows /
  (last record readable - first commit). Latency here includes the backlog's queueing.
- ``task only``: the same rows decoded by ``PostgresCdcSourceTask.poll()`` alone from a second
  slot (no hub): the connector's own ceiling, to separate its cost from the hub's; the same
  pass also runs every polled record through the key and value JSON converters
  (``schemas.enable=true``), timed apart, which gives "connector + converters (no broker)":
  the ceiling of the source side before the producer and the broker. Both by wall time and
  per CPU-second of the polling thread (the latter does not move with the machine's load).

CPU is read from /proc per phase: the hub process (worker, REST API; with ``sluice up``'s
broker on a thread, the broker too), its child processes (the broker, when ``sluice up`` runs it
as a child), PostgreSQL, and the rest of the machine (other users of a shared machine).

Targets (issue 5): >= 20k events/s at full speed; p99 < 500 ms at 5k rows/s.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import uuid
from array import array
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import psycopg  # noqa: E402
from _common import CpuMeter, _proc_children, machine_summary  # noqa: E402
from confluent_kafka import Consumer  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from connectors.postgres_cdc.source_task import PostgresCdcSourceTask  # noqa: E402
from hub.converters.json import JsonConverter  # noqa: E402
from tests.fixtures.hub import HubProcess  # noqa: E402
from tests.fixtures.postgres import start_local  # noqa: E402

TX_ROWS = 1000
STEADY_RATE = 5000
TARGET_EVENTS_S = 20_000
TARGET_P99_MS = 500.0
_KEY_ID = re.compile(rb'"payload":\{"id":(\d+)\}')
INSERT = "INSERT INTO rows SELECT g, g %% 1000, 'payload-' || g FROM generate_series(%s::bigint, %s::bigint) g"  # noqa: E501


class Reader:
    """Consumes the topic; ``seen[id]`` = wall time the record was read (0 = not yet)."""

    def __init__(self, bootstrap: str, topic: str, total: int) -> None:
        self.seen = array("d", bytes(8 * total))
        self.count = 0
        self.warm = threading.Event()  # set once any record was read (the warm-up row)
        self._stop = threading.Event()
        self._consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
            "fetch.wait.max.ms": 10, "topic.metadata.refresh.interval.ms": 500, "log_level": 3,
        })  # fmt: skip
        self._consumer.subscribe([topic])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        seen, match = self.seen, _KEY_ID.search
        while not self._stop.is_set():
            batch = self._consumer.consume(10_000, 0.05)
            now = time.time()
            for msg in batch:
                key = msg.key()
                if msg.error() or msg.value() is None or not key:
                    continue
                self.warm.set()
                m = match(key)
                if m:
                    i = int(m.group(1))
                    if i < len(seen) and not seen[i]:
                        seen[i] = now
                        self.count += 1

    def wait_for(self, n: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.count < n and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.count >= n

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._consumer.close()


def commit_rows(conn: psycopg.Connection[Any], first: int, n: int, commits: array,
                rate: float | None) -> tuple[float, float]:  # fmt: skip
    """Inserts ids [first, first+n) in 1,000-row transactions; notes each COMMIT's time."""
    start = time.time()
    for k, lo in enumerate(range(first, first + n, TX_ROWS)):
        if rate:
            due = start + k * TX_ROWS / rate
            if (pause := due - time.time()) > 0:
                time.sleep(pause)  # pacing the writer, not synchronisation
        with conn.transaction():
            conn.execute(INSERT, (lo, lo + TX_ROWS - 1))  # type: ignore[arg-type]
        commits[lo // TX_ROWS] = time.time()
    return start, time.time()


def cpu_s(pids: list[int]) -> float:
    """CPU seconds (user+system, incl. waited-for children) of ``pids`` so far, from /proc."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def postgres_pids(data_dir: Path) -> list[int]:
    """The postmaster and its backends (walsenders, checkpointer, ...)."""
    try:
        master = int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return []
    return [master, *_proc_children(master)]


class CpuShares:
    """Average cores used by the hub, its broker child, PostgreSQL and everything else over a
    phase (the hub's children are read live: a running child's CPU is not in the hub's
    cutime)."""

    def __init__(self, hub_pid: int, pg_dir: Path) -> None:
        self.hub_pid, self.pg_dir = hub_pid, pg_dir
        self.t0 = time.monotonic()
        self.load0 = os.getloadavg()[0]
        self.hub0, self.pg0 = cpu_s([hub_pid]), cpu_s(postgres_pids(pg_dir))
        self.kids0 = cpu_s(_proc_children(hub_pid))
        self.meter = CpuMeter()
        self.hub_cores = 0.0

    def summary(self) -> str:
        wall = time.monotonic() - self.t0
        hub = (cpu_s([self.hub_pid]) - self.hub0) / wall
        kids = (cpu_s(_proc_children(self.hub_pid)) - self.kids0) / wall
        pg = (cpu_s(postgres_pids(self.pg_dir)) - self.pg0) / wall
        self.hub_cores = hub + kids
        foreign = self.meter.foreign_cores()
        rest = "?" if foreign is None else f"{max(0.0, foreign - hub - kids - pg):.2f}"
        load = f"{self.load0:.1f} -> {os.getloadavg()[0]:.1f}"
        return (f"hub {hub:.2f} + broker child {kids:.2f}, PostgreSQL {pg:.2f}, other processes "
                f"{rest} (cores, average); load average {load}")  # fmt: skip


def latencies_ms(reader: Reader, commits: array, first: int, n: int) -> list[float]:
    seen = reader.seen
    return sorted(
        (seen[i] - commits[i // TX_ROWS]) * 1000 for i in range(first, first + n) if seen[i]
    )


def pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


def task_only(
    pg: Any, dbname: str, slot: str, publication: str, n: int
) -> tuple[float, float, float, float]:
    """Drains ``n`` changes from ``slot`` with the task alone, converting each polled record
    with the JSON converters as the worker would. Returns events/s of the task and of task +
    converters, each first by wall time spent in that step (includes waiting for the server
    and losing the CPU to other processes), then per CPU-second of this thread (what the step
    costs, whatever else the machine is doing). No broker, no producer."""

    class Offsets:
        def offset(self, partition: Any) -> None:
            return None

        def offsets(self, partitions: Any) -> dict[Any, Any]:
            return {}

    class Context:
        offset_reader = Offsets()
        config: dict[str, Any] = {}

    config = {**pg.connector_config(dbname), "topic.prefix": "taskonly", "slot.name": slot,
              "publication.name": publication, "snapshot.mode": "never"}  # fmt: skip
    task = PostgresCdcSourceTask(Context())  # type: ignore[arg-type]
    task.start(config)
    json_conf = {"schemas.enable": "true"}
    key_from = JsonConverter(json_conf, is_key=True).from_connect
    value_from = JsonConverter(json_conf, is_key=False).from_connect
    got = 0
    wall_poll = wall_conv = cpu_poll = cpu_conv = 0.0
    clock, cpu = time.perf_counter, time.thread_time
    deadline = time.monotonic() + 600
    while got < n and time.monotonic() < deadline:
        w0, c0 = clock(), cpu()
        records = task.poll() or []
        w1, c1 = clock(), cpu()
        for r in records:
            key_from(r.topic, r.key_schema, r.key)
            value_from(r.topic, r.value_schema, r.value)
        wall_poll, cpu_poll = wall_poll + w1 - w0, cpu_poll + c1 - c0
        wall_conv, cpu_conv = wall_conv + clock() - w1, cpu_conv + cpu() - c1
        got += len(records)
    task.stop()
    return (got / wall_poll, got / (wall_poll + wall_conv),
            got / cpu_poll, got / (cpu_poll + cpu_conv))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="full-speed row changes")
    parser.add_argument("--steady-seconds", type=float, default=20.0)
    parser.add_argument("--skip-task-only", action="store_true")
    args = parser.parse_args()
    rows = max(TX_ROWS, args.rows // TX_ROWS * TX_ROWS)
    steady = int(STEADY_RATE * args.steady_seconds) // TX_ROWS * TX_ROWS
    total = steady + rows
    tmp = Path(tempfile.mkdtemp(prefix="sluice-cdc-bench-"))
    tmp.chmod(0o755)  # the cluster's directory inside is owned by postgres when run as root
    (tmp / "pg").mkdir()
    console = Console(width=150)
    pg = start_local(tmp / "pg")
    hub = HubProcess(tmp / "hub", {"offset.flush.interval.ms": 1000})
    reader: Reader | None = None
    try:
        hub.start()
        dbname = pg.create_database()
        conn = psycopg.connect(pg.dsn(dbname), autocommit=True)
        conn.execute("CREATE TABLE rows (id bigint PRIMARY KEY, v int, pad text)")
        config = {
            **pg.connector_config(dbname),
            "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "tasks.max": "1", "topic.prefix": "bench", "plugin.name": "pgoutput",
            "slot.name": "bench_hub", "publication.name": "bench_pub",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "true",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "true",
        }  # fmt: skip
        status, body = hub.request("POST", "/connectors", {"name": "bench", "config": config})
        assert status == 201, body
        reader = Reader(hub.bootstrap, "bench.public.rows", total)
        commits = array("d", bytes(8 * (total // TX_ROWS + 1)))
        # warm-up: the slot streams, and one row (id -1, which the reader does not time) went
        # all the way through, so the topic exists and the consumer is assigned to it before
        # anything is timed (else the first transactions carry topic creation and the
        # consumer's metadata refresh, which is no part of commit -> readable)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            active = conn.execute(
                "SELECT active FROM pg_replication_slots WHERE slot_name = 'bench_hub'"
            ).fetchone()
            if active and active[0]:
                break
            time.sleep(0.05)
        conn.execute("INSERT INTO rows VALUES (-1, 0, 'warm-up')")
        if not reader.warm.wait(60):
            raise SystemExit("warm-up row never became readable: is the connector running?")
        console.print(f"steady phase: {steady:,} rows at {STEADY_RATE:,} rows/s")
        assert hub.proc is not None and pg.data_dir is not None
        shares = CpuShares(hub.proc.pid, pg.data_dir)
        commit_rows(conn, 0, steady, commits, STEADY_RATE)
        reader.wait_for(steady, 120)
        steady_cpu = shares.summary()
        steady_lat = latencies_ms(reader, commits, 0, steady)
        if not args.skip_task_only:
            conn.execute("SELECT pg_create_logical_replication_slot('bench_task', 'pgoutput')")
        console.print(f"full-speed phase: {rows:,} rows")
        shares = CpuShares(hub.proc.pid, pg.data_dir)
        w0, w1 = commit_rows(conn, steady, rows, commits, None)
        complete = reader.wait_for(total, 900)
        full_cpu = shares.summary()
        full_cores = shares.hub_cores
        console.print(f"  committed in {w1 - w0:.1f} s, readable after {time.time() - w0:.1f} s")
        last = max(reader.seen[steady:total]) if reader.count > steady else float("nan")
        events_s = (reader.count - steady) / (last - w0)
        full_lat = latencies_ms(reader, commits, steady, rows)
        task_rates = None
        if not args.skip_task_only:
            console.print("task-only phase")
            task_rates = task_only(pg, dbname, "bench_task", "bench_pub", rows)
        table = Table(title=f"PostgreSQL CDC: {rows:,} row changes, {TX_ROWS:,}-row transactions")
        for col in ("measurement", "figure", "target"):
            table.add_column(col)
        table.add_row("events/s into the topic, full speed",
                      f"{events_s:,.0f}" + ("" if complete else " (INCOMPLETE)"),
                      f">= {TARGET_EVENTS_S:,}")  # fmt: skip
        if full_cores:
            table.add_row("  per core of hub + broker CPU",
                          f"{events_s / full_cores:,.0f} events/s",
                          f"({full_cores:.2f} cores busy)")  # fmt: skip
        table.add_row("PostgreSQL commit rate (writer)", f"{rows / (w1 - w0):,.0f} rows/s", "")
        table.add_row("commit -> readable at 5k rows/s, p50 / p99",
                      f"{pct(steady_lat, .5):,.0f} / {pct(steady_lat, .99):,.0f} ms",
                      f"p99 < {TARGET_P99_MS:.0f} ms")  # fmt: skip
        table.add_row(
            "commit -> readable at full speed, p50 / p99",
            f"{pct(full_lat, 0.5):,.0f} / {pct(full_lat, 0.99):,.0f} ms",
            "(backlog)",
        )
        if task_rates is not None:
            wall_task, wall_both, cpu_task, cpu_both = task_rates
            table.add_row("connector task alone (poll, no hub)",
                          f"{wall_task:,.0f} events/s ({cpu_task:,.0f} per CPU-second)",
                          "")  # fmt: skip
            table.add_row("connector + converters only (no broker)",
                          f"{wall_both:,.0f} events/s ({cpu_both:,.0f} per CPU-second)",
                          "one thread")  # fmt: skip
        table.add_row("machine", machine_summary(str(tmp)), "")
        table.add_row("CPU during the 5k rows/s phase", steady_cpu, "")
        table.add_row("CPU during the full-speed phase", full_cpu, "")
        console.print(table)
    finally:
        try:
            if reader is not None:
                reader.close()
            hub.stop()
        finally:
            pg.stop("immediate")
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
