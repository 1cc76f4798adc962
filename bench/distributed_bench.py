"""Distributed workers benchmark (issue 20): failover time, and throughput over 1 vs 3 workers.

    .venv/bin/python bench/distributed_bench.py                      # defaults below
    .venv/bin/python bench/distributed_bench.py --lines 100000 --pipelines 3

Rows:

- ``failover``: three ``sluice connect`` workers, ``--pipelines`` file pipelines (source and
  sink, one task each) spread over them; the worker running the most tasks is killed with
  SIGKILL; the time until every one of its tasks reports RUNNING on another worker (session
  timeout + one rebalance + the restart). Session timeout ``--session-ms``, heartbeat 1 s.
- ``1 worker`` / ``3 workers``: ``--pipelines`` file pipelines (file source -> topic -> file
  sink) created over empty files and left to settle (every connector created rebalances the
  group, which restarts every task: eager protocol), then ``--lines`` 100-byte lines appended to
  each source; lines/s until every sink file holds every line. Same broker, same machine, one
  run: the three workers share the machine's cores with the broker, so expect no speed-up on
  two cores, only no loss (target: 3 workers >= 90% of 1).

Workers and the broker are separate processes (the test fixtures' classes); results print with
the machine's load (``uptime``) before and after.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fixtures.broker import BrokerProcess, wait_until  # noqa: E402
from tests.fixtures.workers import WorkerProcess, group_settings  # noqa: E402

STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _group(broker: BrokerProcess, root: Path, count: int, **settings: Any) -> list[WorkerProcess]:
    root.mkdir(parents=True, exist_ok=True)
    workers = []
    for i in range(count):
        w = WorkerProcess(root / f"w{i}", broker.bootstrap, group_settings(root, **settings))
        w.start()
        workers.append(w)
    wait_until(lambda: _stable(workers, count), 120, f"{count} workers in a stable group")
    return workers


def _stable(workers: list[WorkerProcess], count: int) -> bool:
    views = [w.request("GET", "/workers")[1] for w in workers if w.running]
    return all(v and not v["rebalancing"] and len(v["members"]) == count for v in views)


def _pipelines(via: WorkerProcess, root: Path, count: int, tag: str) -> list[tuple[Path, Path]]:
    """Creates ``count`` file pipelines over empty files; (source, sink) paths."""
    paths = []
    for i in range(count):
        source, sink = root / f"{tag}-in{i}.txt", root / f"{tag}-out{i}.txt"
        source.write_text("")
        paths.append((source, sink))
        src = {"connector.class": "FileStreamSource", "tasks.max": "1", "topic": f"{tag}{i}",
               "file": str(source), **STRINGS}  # fmt: skip
        snk = {"connector.class": "FileStreamSink", "tasks.max": "1", "topics": f"{tag}{i}",
               "file": str(sink), **STRINGS}  # fmt: skip
        via.call("POST", "/connectors", {"name": f"{tag}-src{i}", "config": src})
        via.call("POST", "/connectors", {"name": f"{tag}-snk{i}", "config": snk})
    return paths


def _all_running(via: WorkerProcess, names: list[str]) -> dict[str, str] | None:
    """Connector name -> the worker id its task 0 runs on, once every one is RUNNING."""
    out = {}
    for name in names:
        status, body = via.request("GET", f"/connectors/{name}/status")
        tasks = body["tasks"] if status == 200 else []
        if not tasks or tasks[0]["state"] != "RUNNING":
            return None
        out[name] = tasks[0]["worker_id"]
    return out


def _fill(paths: list[tuple[Path, Path]], lines: int) -> None:
    line = "x" * 93
    for source, _ in paths:
        with open(source, "a") as f:
            f.write("".join(f"{n:06d}{line}\n" for n in range(lines)))


def _count(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def throughput(broker: BrokerProcess, root: Path, workers: int, args: Any) -> float:
    """Lines/s once the pipelines run: created over empty files and settled first (creating
    a connector rebalances the group, which restarts every task), then filled."""
    settings = {"group.id": f"tp{workers}", "config.storage.topic": f"tp{workers}-configs",
                "offset.storage.topic": f"tp{workers}-offsets",
                "status.storage.topic": f"tp{workers}-status"}  # fmt: skip
    group = _group(broker, root / f"t{workers}", workers, **settings)
    try:
        paths = _pipelines(group[0], root / f"t{workers}", args.pipelines, "p")
        names = [f"p-{kind}{i}" for i in range(args.pipelines) for kind in ("src", "snk")]
        wait_until(lambda: _all_running(group[0], names), 120, "every task running")
        wait_until(lambda: _stable(group, workers), 60, "a stable group")
        start = time.monotonic()
        _fill(paths, args.lines)
        total = args.pipelines * args.lines
        wait_until(lambda: sum(_count(sink) for _, sink in paths) >= total, 1800, "every line")
        return total / (time.monotonic() - start)
    finally:
        for w in group:
            w.stop()


def failover(broker: BrokerProcess, root: Path, args: Any) -> float:
    group = _group(broker, root / "f", 3, **{"session.timeout.ms": args.session_ms})
    try:
        paths = _pipelines(group[0], root / "f", args.pipelines, "f")
        _fill(paths, 1000)
        names = [f"f-{kind}{i}" for i in range(args.pipelines) for kind in ("src", "snk")]
        wait_until(lambda: _all_running(group[0], names), 120, "every task running")
        wait_until(lambda: _stable(group, 3), 60, "a stable group")
        placed: Any = wait_until(lambda: _all_running(group[0], names), 60, "placement")
        victim = max(group, key=lambda w: sum(1 for o in placed.values() if o == w.worker_id))
        moved = [n for n, o in placed.items() if o == victim.worker_id]
        survivor = next(w for w in group if w is not victim)
        killed = time.monotonic()
        victim.kill()

        def all_moved() -> bool:
            now = _all_running(survivor, moved)
            return now is not None and victim.worker_id not in now.values()

        wait_until(all_moved, 120, "the killed worker's tasks running elsewhere")
        return time.monotonic() - killed
    finally:
        for w in group:
            if w.running:
                w.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=200_000, help="lines per pipeline")
    parser.add_argument("--pipelines", type=int, default=3)
    parser.add_argument("--session-ms", type=int, default=6000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="distributed-bench-"))
    broker = BrokerProcess(root / "broker")
    broker.start()
    try:
        print(f"load before: {_uptime()}")
        seconds = failover(broker, root, args)
        print(f"failover (kill -9 -> tasks running elsewhere, session {args.session_ms} ms): "
              f"{seconds:.1f} s")  # fmt: skip
        one = throughput(broker, root, 1, args)
        print(f"1 worker:  {one:,.0f} lines/s ({args.pipelines} pipelines x {args.lines:,})")
        three = throughput(broker, root, 3, args)
        print(f"3 workers: {three:,.0f} lines/s ({three / one:.0%} of one worker)")
        print(f"load after: {_uptime()}")
    finally:
        broker.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
