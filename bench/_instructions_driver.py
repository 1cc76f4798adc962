"""The hub rows of one checkout's file pipeline bench, run under callgrind (instructions_ab.py).

    valgrind --tool=callgrind --trace-children=no python bench/_instructions_driver.py \
        --checkout DIR --lines 20000 --cgreq libcgreq.so [--gc-threshold 50000] [--tmp DIR]

``instructions_ab.py`` starts this once per (revision, lines, repeat); it is not meant to be
run by hand, though it runs without valgrind too (the client requests are then no-ops).

It imports ``DIR/bench/file_pipeline_bench.py`` (with ``DIR`` first on ``sys.path``, so the
hub, the connectors and the bench fixtures are all that checkout's; asserted below), then
builds the fixtures that bench's ``main()`` builds for its hub rows: the input file, a
``sluice broker`` child process, topics ``hub-leg`` and ``hub-e2e``, an in-process Herder and
its REST app (the bench's ``Hub``). The three hub rows follow, the way the bench's own
``hub_leg1``/``hub_leg2``/``hub_end_to_end`` run them (connectors created over REST), except
the waiting loops: those are copied here with a far longer deadline (valgrind runs ~50x
slower) and a 0.2 s poll instead of 0.01 s, since the polling of a waiting loop costs
instructions in proportion to wall time, not to lines.

Around each leg: ``CALLGRIND_DUMP_STATS_AT("pre-<leg>")`` before it (a dump also resets every
thread's counters) and ``CALLGRIND_DUMP_STATS_AT("<leg>")`` after it, so the dump named after
the leg holds that leg's instructions alone, in every thread of this process (Python, the
Herder's task threads, librdkafka's threads). The broker child is not traced.

Stdout carries one line per step for the caller's progress bar: ``STEP ready``, then
``STEP <leg> wall=<s> cpu=<s>`` after each leg; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import importlib.util
import inspect
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

DEADLINE_S = 6000.0  # per leg; the bench's own loops give up after 600 s
POLL_S = 0.2  # the bench's own loops poll every 0.01 s
LEGS = ("leg1", "leg2", "e2e")


def log(message: str) -> None:
    sys.stderr.write(f"[driver {time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


def step(message: str) -> None:
    sys.stdout.write(f"STEP {message}\n")
    sys.stdout.flush()


def load_bench(checkout: Path) -> ModuleType:
    """The checkout's file_pipeline_bench, with the checkout's packages (checked)."""
    sys.path.insert(0, str(checkout))
    spec = importlib.util.spec_from_file_location(
        "file_pipeline_bench", checkout / "bench" / "file_pipeline_bench.py"
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"no bench/file_pipeline_bench.py in {checkout}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import connectors.file.sink_task
    import connectors.file.source_task
    import hub
    import hub.runtime.herder

    for mod in (
        module,
        hub,
        hub.runtime.herder,
        connectors.file.source_task,
        connectors.file.sink_task,
    ):
        where = Path(mod.__file__ or "?").resolve()
        if not where.is_relative_to(checkout):
            raise SystemExit(f"{mod.__name__} imported from {where}, not from {checkout}")
    log(f"hub from {hub.__file__}")
    return module


def make_hub(fpb: ModuleType, bootstrap: str, files: Path) -> Any:
    """The bench's Hub, whatever its constructor asks for (it gained ``files`` over time)."""
    known = {"bootstrap": bootstrap, "lean": False, "files": files}
    kwargs = {}
    for name, param in inspect.signature(fpb.Hub).parameters.items():
        if name in known:
            kwargs[name] = known[name]
        elif param.default is inspect.Parameter.empty:
            raise SystemExit(f"this checkout's bench Hub() wants {name!r}, unknown to the driver")
    return fpb.Hub(**kwargs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", required=True, type=Path)
    ap.add_argument("--lines", type=int, required=True)
    ap.add_argument("--cgreq", required=True, help="the compiled client-request shim (.so)")
    ap.add_argument("--gc-threshold", type=int, default=0)
    ap.add_argument("--tmp", type=Path, default=None, help="parent of the scratch directory")
    args = ap.parse_args()

    cg = ctypes.CDLL(args.cgreq)
    cg.cg_dump.argtypes = [ctypes.c_char_p]
    cg.cg_dump.restype = None
    if not cg.cg_running():
        log("not running under valgrind: the dumps are no-ops")
    if args.gc_threshold:
        gc.set_threshold(args.gc_threshold, 20, 20)  # as sluice/node.py does
    fpb = load_bench(args.checkout.resolve())
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as KafkaTP

    lines = args.lines
    tmp = Path(tempfile.mkdtemp(prefix="sluice-instructions-", dir=args.tmp))
    broker = None
    try:
        src = tmp / "input.log"
        fpb.make_input(src, lines)
        size = src.stat().st_size
        broker = fpb.Broker(tmp / "data")
        bootstrap = broker.bootstrap
        for topic in ("hub-leg", "hub-e2e"):
            fpb.create_topic(bootstrap, topic)
        h = make_hub(fpb, bootstrap, tmp)
        step("ready")

        def wait_file(path: Path) -> None:
            deadline = time.monotonic() + DEADLINE_S
            while time.monotonic() < deadline:
                if path.exists() and path.stat().st_size >= size:
                    return
                time.sleep(POLL_S)
            raise SystemExit(f"{path.name} did not reach {size} bytes")

        def leg1() -> None:  # fpb.hub_leg1
            watcher = Consumer({"bootstrap.servers": bootstrap, "group.id": "hub-leg1-watch"})
            h.source("leg1-source", src, "hub-leg")
            deadline = time.monotonic() + DEADLINE_S
            while time.monotonic() < deadline:
                if watcher.get_watermark_offsets(KafkaTP("hub-leg", 0), 60)[1] >= lines:
                    break
                time.sleep(POLL_S)
            else:
                raise SystemExit("hub leg 1 did not finish")
            watcher.close()

        def leg2() -> None:  # fpb.hub_leg2
            h.sink("leg2-sink", tmp / "hub-leg2.out", "hub-leg")
            wait_file(tmp / "hub-leg2.out")

        def e2e() -> None:  # fpb.hub_end_to_end
            h.sink("e2e-sink", tmp / "hub-e2e.out", "hub-e2e")
            h.source("e2e-source", src, "hub-e2e")
            wait_file(tmp / "hub-e2e.out")

        try:
            for name, fn in zip(LEGS, (leg1, leg2, e2e), strict=True):
                cpu, wall = time.process_time(), time.perf_counter()
                cg.cg_dump(f"pre-{name}".encode())
                fn()
                cg.cg_dump(name.encode())
                step(
                    f"{name} wall={time.perf_counter() - wall:.2f} "
                    f"cpu={time.process_time() - cpu:.2f}"
                )
        finally:
            h.stop()
        for out_name in ("hub-leg2.out", "hub-e2e.out"):
            if (tmp / out_name).read_bytes() != src.read_bytes():
                raise SystemExit(f"{out_name} differs from the input")
    finally:
        if broker is not None:
            broker.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
