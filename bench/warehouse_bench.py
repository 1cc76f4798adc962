"""Warehouse sink benchmark: records/s into PostgreSQL beside a raw COPY of the same rows.

    .venv/bin/python bench/warehouse_bench.py                   # 1,000,000 records of ~200 bytes
    .venv/bin/python bench/warehouse_bench.py --records 200000 --markdown out.md
    .venv/bin/python bench/warehouse_bench.py --dsn "host=... dbname=..."   # your own server

Rows:

- ``warehouse sink, insert``: ``insert.mode=insert``, ``pk.mode=none``, ``auto.create`` (the
  COPY path). ``upsert, new keys`` / ``upsert, existing keys``: ``insert.mode=upsert``,
  ``pk.mode=record_key`` into an empty table, then the same keys again (every row updated).
  A ``WarehouseSinkTask`` is driven directly: ``put`` in batches of 500 (what the worker
  delivers; the task groups them into transactions of ``batch.size`` rows or more, see
  docs/connectors/warehouse.md), then ``pre_commit``. Timed from the first put until
  pre_commit returns every offset, i.e. until every row is committed.
- ``raw COPY, same rows``: psycopg 3 ``COPY ... FROM STDIN`` of the same column tuples into an
  identical table in one transaction: what the server and driver cost for these rows. Text
  COPY (``write_row``) and binary COPY (``write_row`` with the column types set, as the sink
  uses where it can), each run before and after the sink phases; the best of the four is the
  reference.
- ``raw SQL doing the same``: for inserts the raw COPY; for upserts the database's own bulk
  upsert of the same rows (COPY into a temp table, one INSERT ... ON CONFLICT, one
  transaction), run just before the sink phase: what an upsert costs PostgreSQL itself.

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
Targets (issue 6): >= 50k records/s and >= 50% of the raw COPY speed.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--dsn", help="libpq conninfo of an existing (empty) database")
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sluice-wh-bench-"))
    server = None
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
        # Each sink phase runs right after its raw counterpart, so both see the same load.
        results: list[tuple[str, Phase, str, Phase]] = []
        phases: list[tuple[str, Phase]] = []
        copies = [run_raw_copy(dsn, records, "raw_copy"),
                  run_raw_copy(dsn, records, "raw_copy_b", binary=True)]  # fmt: skip
        raw_copy = min(copies, key=lambda p: p.wall)
        sink = run_sink(url, records)
        results.append(("insert (COPY)", sink, "raw COPY", raw_copy))
        phases += [("raw text COPY", copies[0]), ("raw binary COPY", copies[1]),
                   ("sink, insert", sink)]  # fmt: skip
        sys.stderr.write(f"insert: sink {n / sink.wall:,.0f} rec/s, raw COPY "
                         f"{n / raw_copy.wall:,.0f}\n")  # fmt: skip
        raw_new, raw_existing = run_raw_upsert(dsn, records, "raw_upsert", 2)
        upsert = {"insert.mode": "upsert", "pk.mode": "record_key"}
        for label, raw_p in (("upsert, new keys", raw_new), ("upsert, existing keys",
                                                              raw_existing)):  # fmt: skip
            sink = run_sink(url, upserts, **upsert)
            results.append((label, sink, "raw upsert", raw_p))
            phases += [(f"raw upsert, {label[8:]}", raw_p), (f"sink, {label}", sink)]
            sys.stderr.write(f"{label}: sink {n / sink.wall:,.0f} rec/s, raw "
                             f"{n / raw_p.wall:,.0f}\n")  # fmt: skip
        after = [run_raw_copy(dsn, records, "raw_copy_2"),
                 run_raw_copy(dsn, records, "raw_copy_2b", binary=True)]  # fmt: skip
        phases += [("raw text COPY, after", after[0]), ("raw binary COPY, after", after[1])]
        raw_copy_after = min(after, key=lambda p: p.wall)
        assert count(dsn, "ins") == n and count(dsn, "ups") == n
        version = server_version(dsn)
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    finally:
        if server is not None:
            server.stop("fast")
        shutil.rmtree(tmp, ignore_errors=True)
    copy_rps = n / min(raw_copy.wall, raw_copy_after.wall)
    lines = [
        f"Machine: {machine_summary(tempfile.gettempdir())}; load average {load}",
        f"Database: PostgreSQL {version} on the same machine "
        f"({'given by --dsn' if args.dsn else 'private cluster, fsync=on'}); "
        f"{n:,} records of ~200 B, put in batches of {PUT_BATCH}, batch.size 3000",
        "",
        "| sink | records/s | raw COPY, same rows (best of 4) | sink / raw COPY "
        "| raw SQL doing the same (records/s) | sink / raw SQL | target (>=50k/s, >=50% of "
        "raw COPY) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for label, sink_p, raw_label, raw_p in results:
        rps = n / sink_p.wall
        verdict = "pass" if rps >= TARGET_RPS and rps / copy_rps >= TARGET_RATIO else "MISS"
        lines.append(f"| warehouse sink, {label} | {rps:,.0f} | {copy_rps:,.0f} | "
                     f"{rps / copy_rps:.0%} | {raw_label}: {n / raw_p.wall:,.0f} | "
                     f"{raw_p.wall / sink_p.wall:.0%} | {verdict} |")  # fmt: skip
    lines += [
        "",
        "CPU per phase (client = this process, all threads; server = its PostgreSQL backend):",
        "",
        "| phase | records/s (wall) | client CPU µs/record | server CPU µs/record "
        "| records per CPU-second (client + server) |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, p in phases:
        server = f"{p.server / n * 1e6:.2f}" if p.server is not None else "—"
        total = p.client + (p.server or 0.0)
        lines.append(f"| {label} | {n / p.wall:,.0f} | {p.client / n * 1e6:.2f} | {server} | "
                     f"{n / total:,.0f} |")  # fmt: skip
    table = "\n".join(lines)
    sys.stdout.write(table + "\n")
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")


if __name__ == "__main__":
    main()
