"""Warehouse sink benchmark: records/s into PostgreSQL beside a raw COPY of the same rows.

    .venv/bin/python bench/warehouse_bench.py                   # 1,000,000 records of ~200 bytes
    .venv/bin/python bench/warehouse_bench.py --records 200000 --markdown out.md
    .venv/bin/python bench/warehouse_bench.py --dsn "host=... dbname=..."   # your own server

Phases, each run ``--rounds`` times (default 3):

- ``sink, insert``: ``insert.mode=insert``, ``pk.mode=none``, ``auto.create`` (the COPY
  path). ``sink, upsert, new keys`` / ``existing keys``: ``insert.mode=upsert``,
  ``pk.mode=record_key`` into an empty table, then the same keys again (every row updated).
  A ``WarehouseSinkTask`` is driven directly: ``put`` in batches of 500 (what the worker
  delivers; the task groups them into transactions of ``batch.size`` rows or more, see
  docs/connectors/warehouse.md), then ``pre_commit``. Timed from the first put until
  pre_commit returns every offset, i.e. until every row is committed.
- ``raw binary COPY``: psycopg 3 ``COPY ... FROM STDIN (FORMAT BINARY)`` of the same column
  tuples (``write_row`` with the column types set) into an identical table in one
  transaction: what the server and driver cost for these rows, the insert's reference.
  A text COPY runs once before the rounds, for comparison.
- ``raw upsert``: the database's own bulk upsert of the same rows (COPY into a temp table,
  one INSERT ... ON CONFLICT, one transaction), new keys then existing keys: the upserts'
  reference, since a COPY cannot upsert (PostgreSQL's own upsert of existing keys runs at
  ~12% of its COPY).

Pairing: in each round every sink phase runs back to back with its raw counterpart (the raw
one first in round 1, the sink first in round 2, and so on), and every table is dropped
after its pair. A phase's speed depends on what ran just before it (the raw COPY moved
between ~1.3M and ~1.9M rows/s by its slot alone; most likely the previous write's dirty
pages being evicted), so the order alternates, and the verdict uses the median of the
rounds' paired ratios (sink / raw of the same round), not one run against the best of
several.

CPU: each phase also reports the CPU time it used, the client's (this process, all its
threads: the task's own and its writer thread, or psycopg for the raw COPY) and the server's
(the PostgreSQL backend of the connection, from /proc; private cluster only), as µs per
record and records per CPU-second. On a shared machine the wall-clock rates of the sink and of
its reference move with the other processes' load (the raw COPY varies 2x between runs);
CPU per record does not, so it is the steadier comparison of the work each does.

Records (dict values with a Connect struct schema, as the JSON converter delivers them) are
built before the clock starts: the figure is the sink's, not the converter's or the broker's.
Unless ``--dsn`` is given, a private PostgreSQL cluster is started (tests/fixtures/postgres.py)
with ``fsync=on`` and ``synchronous_commit=on``, so every transaction is durable.
Targets (issue 6): >= 50k records/s and >= 50% of the raw store's speed (the median paired
ratio).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402

from bench._common import machine_summary  # noqa: E402
from connectors.warehouse.sink_task import WarehouseSinkTask  # noqa: E402
from hub.api import Schema, SinkRecord, TopicPartition  # noqa: E402
from hub.api.schema import FLOAT64_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, struct  # noqa: E402

TARGET_RPS = 50_000
TARGET_RATIO = 0.5
PUT_BATCH = 500
KEY: Schema = struct(("id", INT64_SCHEMA), name="bench.Key")
VALUE: Schema = struct(
    ("id", INT64_SCHEMA), ("user", STRING_SCHEMA), ("event", STRING_SCHEMA),
    ("url", STRING_SCHEMA), ("referrer", STRING_SCHEMA), ("ts", INT64_SCHEMA),
    ("amount", FLOAT64_SCHEMA), name="bench.Value",
)  # fmt: skip
DDL = ("(id bigint, \"user\" text, event text, url text, referrer text, ts bigint, "
       "amount double precision)")  # fmt: skip


class Ctx:
    config: dict[str, Any] = {}

    def assignment(self) -> set[TopicPartition]:
        return set()

    def pause(self, *p: TopicPartition) -> None: ...
    def resume(self, *p: TopicPartition) -> None: ...
    def offset(self, p: TopicPartition, o: int) -> None: ...
    def request_commit(self) -> None: ...


def make_records(n: int, topic: str) -> list[SinkRecord]:
    """~200-byte values (as JSON) with varying content; the key is the id."""
    out = []
    for i in range(n):
        value = {
            "id": i, "user": f"user-{i % 50_000:06d}", "event": ("click", "view", "buy")[i % 3],
            "url": f"/products/category-{i % 97:02d}/item-{i:09d}?ref=campaign-{i % 13}",
            "referrer": f"https://search.example.com/q?term=product+{i % 1000}",
            "ts": 1_700_000_000_000 + i, "amount": (i % 1000) / 10,
        }  # fmt: skip
        out.append(SinkRecord(topic=topic, partition=0, offset=i, key={"id": i}, key_schema=KEY,
                              value=value, value_schema=VALUE))  # fmt: skip
    return out


class Phase:
    """Wall-clock and CPU time (this process; the PostgreSQL backend ``pid``) of one phase."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.wall = self.client = 0.0
        self.server: float | None = None

    def __enter__(self) -> Phase:
        self._t, self._c, self._s = time.perf_counter(), time.process_time(), proc_cpu(self.pid)
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._t
        self.client = time.process_time() - self._c
        end = proc_cpu(self.pid)
        self.server = end - self._s if end is not None and self._s is not None else None


def proc_cpu(pid: int | None) -> float | None:
    """User + system CPU seconds of process ``pid`` (None if it cannot be read: not local)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_sink(url: str, records: list[SinkRecord], **config: str) -> Phase:
    n = len(records)
    raw = {"name": "bench", "topics": records[0].topic, "connection.url": url,
           "auto.create": "true", **config}  # fmt: skip
    task = WarehouseSinkTask(Ctx())  # type: ignore[arg-type]
    task.start(raw)
    tp = TopicPartition(records[0].topic, 0)
    pid = task._connection().connection.driver_connection.info.backend_pid  # type: ignore[union-attr]
    with Phase(pid) as phase:
        for i in range(0, n, PUT_BATCH):
            task.put(records[i : i + PUT_BATCH])
        done = task.pre_commit({tp: n})
    task.stop()
    assert done == {tp: n}, done
    return phase


BINARY_TYPES = ["int8", "text", "text", "text", "text", "int8", "float8"]  # DDL's columns


def run_raw_copy(dsn: str, records: list[SinkRecord], table: str, binary: bool = False) -> Phase:
    """COPY of the same column tuples into a fresh table like the sink's, one transaction;
    text, or binary with the column types set."""
    names = [f.name for f in VALUE.fields]
    rows = [tuple(r.value[k] for k in names) for r in records]  # untimed
    with psycopg.connect(dsn) as conn:
        conn.execute(f"CREATE TABLE {table} {DDL}")  # type: ignore[arg-type]
        conn.commit()
        with Phase(conn.info.backend_pid) as phase:
            stmt = f"COPY {table} FROM STDIN" + (" (FORMAT BINARY)" if binary else "")
            with conn.cursor() as cur, cur.copy(stmt) as copy:  # type: ignore[arg-type]
                if binary:
                    copy.set_types(BINARY_TYPES)
                for row in rows:
                    copy.write_row(row)
            conn.commit()
        return phase


def run_raw_upsert(dsn: str, records: list[SinkRecord], table: str, passes: int) -> list[Phase]:
    """The database's own upsert of the same rows: COPY into a temp table, then one INSERT
    ... SELECT ... ON CONFLICT DO UPDATE into a table with the primary key, one transaction;
    ``passes`` times (the first inserts new keys, the next ones update every row)."""
    names = [f.name for f in VALUE.fields]
    rows = [tuple(r.value[k] for k in names) for r in records]  # untimed
    cols = ", ".join(f'"{n}"' for n in names)
    sets = ", ".join(f'"{n}" = EXCLUDED."{n}"' for n in names if n != "id")
    out = []
    with psycopg.connect(dsn) as conn:
        conn.execute(f"CREATE TABLE {table} {DDL[:-1]}, PRIMARY KEY (id))")  # type: ignore[arg-type]
        conn.commit()
        for _ in range(passes):
            with Phase(conn.info.backend_pid) as phase:
                conn.execute(f"CREATE TEMP TABLE stage (LIKE {table}) ON COMMIT DROP")  # type: ignore[arg-type]
                with conn.cursor() as cur, cur.copy(f"COPY stage ({cols}) FROM STDIN") as copy:  # type: ignore[arg-type]
                    for row in rows:
                        copy.write_row(row)
                conn.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM stage "  # type: ignore[arg-type]
                             f"ON CONFLICT (id) DO UPDATE SET {sets}")  # fmt: skip
                conn.commit()
            out.append(phase)
    return out


def count(dsn: str, table: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # type: ignore[arg-type]
        return int(row[0]) if row else 0


def start_server(tmp: Path) -> Any:
    from tests.fixtures.postgres import SERVER_OPTIONS, start_local

    options = SERVER_OPTIONS.replace("fsync=off", "fsync=on")
    options = options.replace("full_page_writes=off", "full_page_writes=on")
    return start_local(tmp, options)


def server_version(dsn: str) -> str:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "?"


def drop(dsn: str, *tables: str) -> None:
    with psycopg.connect(dsn) as conn:
        for table in tables:
            conn.execute(f"DROP TABLE IF EXISTS {table}")  # type: ignore[arg-type]


def run_round(dsn: str, url: str, records: list[SinkRecord], upserts: list[SinkRecord],
              sink_first: bool) -> dict[str, Phase]:  # fmt: skip
    """One round: each sink phase beside its raw counterpart, run back to back (in the order
    ``sink_first`` says) so that both see the same load; every table dropped after."""
    n = len(records)
    out: dict[str, Phase] = {}

    def pair(sink_name: str, sink: Any, raw_name: str, raw: Any) -> None:
        for name, run in ((sink_name, sink), (raw_name, raw))[:: 1 if sink_first else -1]:
            out[name] = run()
            sys.stderr.write(f"  {name}: {n / out[name].wall:,.0f} records/s\n")

    pair(
        "sink, insert",
        lambda: run_sink(url, records),
        "raw binary COPY",
        lambda: run_raw_copy(dsn, records, "raw_copy_b", binary=True),
    )
    drop(dsn, "ins", "raw_copy_b")
    upsert = {"insert.mode": "upsert", "pk.mode": "record_key"}
    raws: list[Phase] = []
    pair("sink, upsert, new keys", lambda: run_sink(url, upserts, **upsert),
         "raw upsert, new keys", lambda: raws.extend(run_raw_upsert(dsn, records, "raw_ups", 2))
         or raws[0])  # fmt: skip
    out["raw upsert, existing keys"] = raws[1]
    out["sink, upsert, existing keys"] = run_sink(url, upserts, **upsert)
    sys.stderr.write(f"  sink, upsert, existing keys: "
                     f"{n / out['sink, upsert, existing keys'].wall:,.0f} records/s\n")  # fmt: skip
    assert count(dsn, "ups") == n
    drop(dsn, "ups", "raw_ups")
    return out


# (sink phase, the raw phase the target compares it with)
PAIRS = [
    ("insert (COPY)", "sink, insert", "raw binary COPY"),
    ("upsert, new keys", "sink, upsert, new keys", "raw upsert, new keys"),
    ("upsert, existing keys", "sink, upsert, existing keys", "raw upsert, existing keys"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every phase (default 3)")
    ap.add_argument("--dsn", help="libpq conninfo of an existing (empty) database")
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sluice-wh-bench-"))
    server = None
    rounds: list[dict[str, Phase]] = []
    try:
        if args.dsn:
            dsn = args.dsn
        else:
            server = start_server(tmp)
            dbname = server.create_database()
            dsn = server.dsn(dbname)
        info = psycopg.conninfo.conninfo_to_dict(dsn)
        url = (f"postgresql+psycopg://{info.get('user', '')}@{info.get('host', '')}:"
               f"{info.get('port', 5432)}/{info.get('dbname', '')}")  # fmt: skip
        n = args.records
        sys.stderr.write(f"building {n:,} records...\n")
        records = make_records(n, "ins")
        upserts = [r.replace(topic="ups") for r in records]
        gc.collect()
        gc.freeze()  # the records live through the run: keep the collector off them
        text = run_raw_copy(dsn, records, "raw_copy_t")  # for reference: text COPY
        drop(dsn, "raw_copy_t")
        for r in range(args.rounds):
            sys.stderr.write(f"round {r + 1} of {args.rounds}\n")
            rounds.append(run_round(dsn, url, records, upserts, sink_first=r % 2 == 1))
        version = server_version(dsn)
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    finally:
        if server is not None:
            server.stop("fast")
        shutil.rmtree(tmp, ignore_errors=True)
    table = report(n, rounds, text, version, load, bool(args.dsn))
    sys.stdout.write(table + "\n")
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")


def report(n: int, rounds: list[dict[str, Phase]], text: Phase, version: str, load: str,
           given: bool) -> str:  # fmt: skip
    """The tables: per sink the best rate of the rounds beside the raw one's best, and the
    ratio of each round's pair (the two ran back to back, so they saw the same load: the
    median of those is the verdict's ratio); then each phase's CPU per record."""
    best = {name: max(n / r[name].wall for r in rounds) for name in rounds[0]}
    copy_best = best["raw binary COPY"]
    lines = [
        f"Machine: {machine_summary(tempfile.gettempdir())}; load average {load}",
        f"Database: PostgreSQL {version} on the same machine "
        f"({'given by --dsn' if given else 'private cluster, fsync=on'}); "
        f"{n:,} records of ~200 B, put in batches of {PUT_BATCH}, batch.size 3000; "
        f"{len(rounds)} rounds, each sink phase back to back with its raw counterpart",
        "",
        "| sink | records/s (best) | raw counterpart | its records/s (best) | sink / raw, "
        "each round (min / median / max) | sink / raw binary COPY (bests) "
        "| target (>=50k/s, >=50% of raw) |",
        "|---|---:|---|---:|---:|---:|---|",
    ]
    for label, sink, raw in PAIRS:
        ratios = sorted(r[raw].wall / r[sink].wall for r in rounds)
        median = statistics.median(ratios)
        verdict = "pass" if best[sink] >= TARGET_RPS and median >= TARGET_RATIO else "MISS"
        lines.append(f"| warehouse sink, {label} | {best[sink]:,.0f} | {raw} | {best[raw]:,.0f} "
                     f"| {ratios[0]:.0%} / {median:.0%} / {ratios[-1]:.0%} "
                     f"| {best[sink] / copy_best:.0%} | {verdict} |")  # fmt: skip
    lines += [
        "",
        f"Raw text COPY of the same rows, once: {n / text.wall:,.0f} rows/s.",
        "",
        "CPU per phase, median of the rounds (client = this process, all threads; server = "
        "its PostgreSQL backend):",
        "",
        "| phase | records/s (each round) | client CPU µs/record | server CPU µs/record "
        "| records per CPU-second (client + server) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in rounds[0]:
        phases = [r[name] for r in rounds]
        client = statistics.median(p.client for p in phases)
        servers = [p.server for p in phases if p.server is not None]
        server = statistics.median(servers) if servers else None
        rates = " / ".join(f"{n / p.wall:,.0f}" for p in phases)
        total = client + (server or 0.0)
        shown = f"{server / n * 1e6:.2f}" if server is not None else "—"
        lines.append(f"| {name} | {rates} | {client / n * 1e6:.2f} | {shown} | "
                     f"{n / total:,.0f} |")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    main()
