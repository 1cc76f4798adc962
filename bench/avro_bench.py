"""Avro vs JSON through the hub: source -> topic -> sink records/s, paired in one run.

    .venv/bin/python bench/avro_bench.py                  # 200,000 records, 3 rounds
    .venv/bin/python bench/avro_bench.py --records 500000 --rounds 5

The same pipeline twice per round, in alternating order (the machine is shared, so each
Avro figure is judged against the JSON figure taken right beside it):

- ``json``: ``value.converter=JsonConverter`` with ``schemas.enable=false`` on both ends;
- ``avro``: ``value.converter=io.confluent.connect.avro.AvroConverter`` on both ends, with
  Sluice's schema registry (in this process) and the Sluice broker (a subprocess).

Rates are taken from the sink's first record to its last (steady state: the worker's start-up
and the group join are the same for both and say nothing about converters); the rate
including start-up is printed beside it. The pipeline is a real hub worker (an in-process
Herder, as ``sluice connect`` runs it): a bench source connector emits order records (a
Connect struct of 8 fields: ints, strings, a double, a boolean, an optional string and a
Timestamp) and a bench sink connector reads one field of every record it gets (so values are
really decoded) and counts them. Keys are null.

Printed: records/s of each run, the Avro/JSON ratio per round and its median (target: Avro
>= 70% of JSON), beside the machine's cores and load average before and after, and the CPU
other processes took during the run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench._common import CpuMeter, machine_summary  # noqa: E402
from bench.file_pipeline_bench import Broker  # noqa: E402  (no group join delay)
from hub.api import (  # noqa: E402
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from hub.api.schema import (  # noqa: E402
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    struct,
)
from hub.converters.logical import TIMESTAMP_SCHEMA  # noqa: E402

TARGET = 0.70
BATCH = 2000
VALUE = struct(
    ("id", INT64_SCHEMA), ("customer", STRING_SCHEMA), ("item", STRING_SCHEMA),
    ("qty", INT32_SCHEMA), ("price", FLOAT64_SCHEMA), ("paid", BOOLEAN_SCHEMA),
    ("note", OPTIONAL_STRING_SCHEMA), ("at", TIMESTAMP_SCHEMA), name="bench.Order",
)  # fmt: skip
AT = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)


class _Progress:
    """What the sink tasks have seen, per run (tasks run on the worker's threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: dict[str, int] = {}
        self.done: dict[str, threading.Event] = {}
        self.want: dict[str, int] = {}
        self.first: dict[str, float] = {}  # when the sink got its first batch
        self.last: dict[str, float] = {}

    def expect(self, run: str, records: int) -> threading.Event:
        with self.lock:
            self.seen[run], self.want[run] = 0, records
            self.done[run] = threading.Event()
            return self.done[run]

    def add(self, run: str, n: int) -> None:
        now = time.perf_counter()
        with self.lock:
            self.first.setdefault(run, now)
            self.last[run] = now
            self.seen[run] = self.seen.get(run, 0) + n
            if self.seen[run] >= self.want.get(run, 1 << 62):
                self.done[run].set()


PROGRESS = _Progress()


class BenchSourceTask(SourceTask):
    def start(self, config: Mapping[str, Any]) -> None:
        self.topic = str(config["topic"])
        self.left = int(config["records"])
        self.next = 0

    def poll(self) -> list[SourceRecord]:
        if self.left <= 0:
            time.sleep(0.05)
            return []
        n = min(BATCH, self.left)
        base = self.next
        out = [
            SourceRecord(
                topic=self.topic, value_schema=VALUE,
                value={"id": i, "customer": f"customer-{i % 997}", "item": "fountain pen",
                       "qty": i % 7, "price": 12.5 + i % 100, "paid": i % 2 == 0,
                       "note": None if i % 3 else "gift wrap", "at": AT},
                source_partition={"bench": self.topic}, source_offset={"i": i},
            )
            for i in range(base, base + n)
        ]  # fmt: skip
        self.next += n
        self.left -= n
        return out

    def stop(self) -> None:
        pass


class BenchSource(SourceConnector):
    name = "bench-orders-source"

    def start(self, config: Any) -> None:
        self.config = dict(config)

    @classmethod
    def task_class(cls) -> type[BenchSourceTask]:
        return BenchSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [self.config]


class BenchSinkTask(SinkTask):
    def start(self, config: Mapping[str, Any]) -> None:
        self.run = str(config["run"])

    def put(self, records: Sequence[SinkRecord]) -> None:
        total = 0
        for record in records:
            total += record.value["qty"]  # every value is decoded and read
        PROGRESS.add(self.run, len(records))

    def stop(self) -> None:
        pass


class BenchSink(SinkConnector):
    name = "bench-orders-sink"

    def start(self, config: Any) -> None:
        self.config = dict(config)

    @classmethod
    def task_class(cls) -> type[BenchSinkTask]:
        return BenchSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [self.config]


class _Plugin:
    @staticmethod
    def sluice_connectors() -> list[type]:
        return [BenchSource, BenchSink]


def converters(kind: str, registry_url: str) -> dict[str, str]:
    if kind == "json":
        return {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "false"}  # fmt: skip
    return {"value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry_url}  # fmt: skip


def create_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)


def run_pipeline(herder: Any, kind: str, records: int, registry_url: str) -> tuple[float, float]:
    """(records/s from the sink's first to its last record, records/s including start-up)."""
    run = f"{kind}-{uuid.uuid4().hex[:8]}"
    topic = f"bench-{run}"
    create_topic(herder.config.bootstrap_servers, topic)
    done = PROGRESS.expect(run, records)
    conv = converters(kind, registry_url)
    start = time.perf_counter()
    sink = {"connector.class": BenchSink.name, "topics": topic, "run": run, **conv}
    source = {"connector.class": BenchSource.name, "topic": topic, "records": str(records)}
    herder.create_connector(f"{run}-sink", sink)
    herder.create_connector(f"{run}-source", {**source, **conv})
    if not done.wait(600):
        raise SystemExit(f"{run}: the sink saw {PROGRESS.seen[run]} of {records} records")
    total = time.perf_counter() - start
    for name in (f"{run}-source", f"{run}-sink"):
        herder.delete_connector(name)
    steady = PROGRESS.last[run] - PROGRESS.first[run]
    return records / steady, records / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from hub.plugins.manager import create_plugin_manager
    from hub.runtime.config import WorkerConfig
    from hub.runtime.herder import Herder
    from schema_registry.server import RegistryServer
    from sluice.node import _tune_gc

    load0 = os.getloadavg()
    print(f"machine: {machine_summary(tempfile.gettempdir())}")
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    meter = CpuMeter()
    data_dir = Path(tempfile.mkdtemp(prefix="avro-bench-"))
    broker = Broker(data_dir / "data")
    registry = RegistryServer({"bootstrap.servers": broker.bootstrap}, port=0)
    registry.start()
    plugins = create_plugin_manager(load_entrypoints=False)
    plugins.register(_Plugin(), name="bench")
    config = WorkerConfig.from_mapping({
        "bootstrap.servers": broker.bootstrap, "offset.flush.interval.ms": 1000,
        "group.id": f"bench-{uuid.uuid4().hex[:6]}",
    })  # fmt: skip
    _tune_gc()  # as sluice up / sluice connect do
    herder = Herder(config, registry=plugins)
    herder.start()
    try:
        run_pipeline(herder, "avro", 20_000, registry.url)  # warm-up: registry, caches, topics
        run_pipeline(herder, "json", 20_000, registry.url)
        rows: list[tuple[float, float]] = []
        for i in range(args.rounds):
            order = ("json", "avro") if i % 2 == 0 else ("avro", "json")
            got = {kind: run_pipeline(herder, kind, args.records, registry.url) for kind in order}
            rows.append((got["json"][0], got["avro"][0]))
            print(
                f"round {i + 1} ({order[0]} first): json {got['json'][0]:,.0f} rec/s "
                f"({got['json'][1]:,.0f} with start-up), avro {got['avro'][0]:,.0f} rec/s "
                f"({got['avro'][1]:,.0f}), avro/json {got['avro'][0] / got['json'][0]:.0%}"
            )
    finally:
        herder.stop()
        registry.stop()
        broker.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    ratios = [a / j for j, a in rows]
    median = statistics.median(ratios)
    load1 = os.getloadavg()
    foreign = meter.foreign_cores()
    print()
    print(f"{args.records:,} records per run, {args.rounds} paired rounds, value converter only "
          "(keys null), one hub worker, Sluice broker in a subprocess")  # fmt: skip
    print(f"json (schemas.enable=false): median {statistics.median(j for j, _ in rows):,.0f} rec/s")
    print(f"avro (AvroConverter + registry): median {statistics.median(a for _, a in rows):,.0f} "
          "rec/s")  # fmt: skip
    print(f"avro/json: median {median:.0%} (per round {', '.join(f'{r:.0%}' for r in ratios)}); "
          f"target >= {TARGET:.0%}: {'met' if median >= TARGET else 'NOT met'}")  # fmt: skip
    print(
        f"load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; "
        f"other processes used {foreign:.2f} cores on average"
        if foreign is not None
        else ""
    )


if __name__ == "__main__":
    main()
