"""MirrorMaker 2 benchmark: records/s mirrored between two local brokers, beside a plain loop.

    .venv/bin/python bench/mirror_bench.py                  # 300k x 100 B, 100k x 1 KB, 3 rounds
    .venv/bin/python bench/mirror_bench.py --records 100000 --rounds 2 --markdown out.md

Two Sluice brokers (``sluice broker``, separate processes and data dirs) are the source (A)
and the target (B). The source topic (4 partitions) is filled before the clock runs, with keyed
records of 100 bytes and of 1 KB. Then, per record size and round:

- ``mirror``: ``sluice mirror --config`` in its own process (one flow A->B, the source
  connector with ``tasks.max=1``, offset syncs on, heartbeats off) copies the topic to
  ``<alias>.bench``; a fresh source alias per run gives a fresh remote topic and fresh worker
  state, so every run copies the whole topic.
- ``plain loop``: this process, confluent-kafka: assign the source partitions, ``consume(4096)``
  and ``produce`` each record (key, value, headers, timestamp, same partition) to a fresh topic
  on B through an idempotent ``acks=all`` producer with ``linger.ms=5``, the hub worker's
  producer settings, no delivery callback. What any Python mirror costs at least.

Both are timed the same way, from outside: the target's end offsets are read every 20 ms; the
clock runs from the first poll that sees records on the target until the one that sees all of
them (start-up costs such as the mirror process importing its modules stay out). The two run
back to back in each round, alternating which goes first, and the verdict is the median of the
rounds' paired ratios (mirror / loop). Target (issue 27): >= 70%.

Checkpoint lag: with the mirror running and records flowing, a consumer group on A commits an
offset; the lag is the time until a checkpoint for that group and offset is on B's
``<alias>.checkpoints.internal``. Target: below 2 x ``emit.checkpoints.interval.seconds``.

The machine is shared: the 1-minute load average is printed before and after each phase, and
the other processes' CPU use (cores busy with processes other than this bench's) beside it.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import CpuMeter, free_port, machine_summary, port_open
from connectors.mirror.wire import Checkpoint

PARTITIONS = 4
TARGET_RATIO = 0.70
ROOT = Path(__file__).resolve().parent.parent


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


# -- brokers ----------------------------------------------------------------------------------


class Broker:
    def __init__(self, root: Path, name: str) -> None:
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.log_path = root / f"{name}.log"
        data = root / name
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "broker", "--data-dir", str(data),
             "--host", "127.0.0.1", "--port", str(self.port),
             "--group-initial-rebalance-delay-ms", "0"],
            stdout=self.log_path.open("w"), stderr=subprocess.STDOUT, cwd=ROOT,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not port_open("127.0.0.1", self.port):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"broker {name} did not start:\n{self.log_path.read_text()}")
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def create_topic(bootstrap: str, topic: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def fill(bootstrap: str, topic: str, records: int, size: int) -> None:
    create_topic(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                         "queue.buffering.max.messages": 1_000_000})  # fmt: skip
    payload = os.urandom(size)
    for i in range(records):
        key = b"key-%d" % i
        while True:
            try:
                producer.produce(topic, payload, key, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(120)


def end_offsets(consumer: Consumer, topic: str) -> int:
    total = 0
    for p in range(PARTITIONS):
        try:
            total += consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=5)[1]
        except Exception:
            return 0
    return total


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_arrival(
    target: str, topic: str, records: int, timeout: float, pid: int
) -> tuple[float, float]:
    """(seconds, CPU µs per record of process ``pid``) from the first poll seeing records on
    ``topic`` to the one seeing all, scaled to the whole count."""
    watcher = Consumer({"bootstrap.servers": target, "group.id": "bench-watch"})
    try:
        deadline = time.monotonic() + timeout
        first: tuple[float, int, float] | None = None
        while time.monotonic() < deadline:
            n = end_offsets(watcher, topic)
            now = time.perf_counter()
            if n and first is None:
                first = (now, n, cpu_seconds(pid))
            if n >= records and first is not None:
                copied = max(1, records - first[1])
                cpu_us = (cpu_seconds(pid) - first[2]) / copied * 1e6
                return (now - first[0]) * records / copied, cpu_us
            time.sleep(0.02)
        raise TimeoutError(f"{topic}: not all {records} records arrived in {timeout:.0f}s")
    finally:
        watcher.close()


# -- the two ways -----------------------------------------------------------------------------


def plain_loop(source: str, target: str, topic: str, records: int) -> tuple[float, float]:
    """Runs ``copy_loop`` in a child process (as the mirror runs in one), timed from outside."""
    out = f"plain-{uuid.uuid4().hex[:8]}"
    create_topic(target, out)
    child = subprocess.Popen(
        [sys.executable, __file__, "--copy-loop", source, target, topic, out, str(records)],
        cwd=ROOT,
    )
    try:
        return timed_arrival(target, out, records, 600, child.pid)
    finally:
        child.wait(60)


def copy_loop(source: str, target: str, topic: str, out: str, records: int) -> None:
    """The plain loop, written for speed: methods bound once, ``produce`` called positionally
    (topic, value, key, partition, callback, on_delivery, timestamp, headers), like the
    runtime's columnar path, and the consumer read as the mirror task reads it (wait for one
    record, then take what is fetched, up to 4096)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    consumer = Consumer({"bootstrap.servers": source, "group.id": "bench-plain",
                         "enable.auto.commit": False})  # fmt: skip
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    producer = Producer({"bootstrap.servers": target, "linger.ms": 5, "acks": "all",
                         "enable.idempotence": True})  # fmt: skip
    produce, poll, consume = producer.produce, consumer.poll, consumer.consume
    done = 0
    while done < records:
        first = poll(0.5)
        if first is None:
            continue
        for m in [first, *consume(4095, 0)]:
            args = (out, m.value(), m.key(), m.partition(), None, None, m.timestamp()[1],
                    m.headers())  # fmt: skip
            while True:
                try:
                    produce(*args)
                    break
                except BufferError:
                    producer.poll(0.005)
            done += 1
        producer.poll(0)
    producer.flush(120)
    consumer.close()


def mirror_config(root: Path, alias: str, source: str, target: str, **extra: str) -> Path:
    lines = {
        "clusters": f"{alias}, T",
        f"{alias}.bootstrap.servers": source,
        "T.bootstrap.servers": target,
        f"{alias}->T.enabled": "true",
        f"{alias}->T.topics": "bench",
        "emit.heartbeats.enabled": "false",
        "tasks.max": "1",
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "refresh.groups.interval.seconds": "600",
        **extra,
    }
    path = root / f"mm2-{alias}.properties"
    path.write_text("".join(f"{k} = {v}\n" for k, v in lines.items()))
    return path


class Mirror:
    def __init__(self, root: Path, config: Path) -> None:
        self.log_path = root / f"{config.stem}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sluice", "mirror", "--config", str(config)],
            stdout=self.log_path.open("w"), stderr=subprocess.STDOUT, cwd=ROOT,
            start_new_session=True,
        )  # fmt: skip

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


def mirror_run(root: Path, source: str, target: str, records: int) -> tuple[float, float]:
    alias = f"s{uuid.uuid4().hex[:6]}"
    mirror = Mirror(root, mirror_config(root, alias, source, target))
    try:
        return timed_arrival(target, f"{alias}.bench", records, 600, mirror.proc.pid)
    finally:
        mirror.stop()


# -- checkpoint lag ---------------------------------------------------------------------------


def checkpoint_lag(
    root: Path, source: str, target: str, interval: int, samples: int
) -> list[float]:
    """Seconds from a group's commit on the source to its checkpoint on the target."""
    alias = f"c{uuid.uuid4().hex[:6]}"
    group = f"bench-group-{alias}"
    committer = Consumer({"bootstrap.servers": source, "group.id": group,
                          "enable.auto.commit": False})  # fmt: skip
    committer.commit(offsets=[TopicPartition("bench", 0, 1)], asynchronous=False)
    config = mirror_config(root, alias, source, target, **{
        "emit.checkpoints.interval.seconds": str(interval),
        f"{alias}->T.groups": group,
        "offset.lag.max": "100",
        "T.offset.flush.interval.ms": "1000",
    })  # fmt: skip
    mirror = Mirror(root, config)
    reader = Consumer({"bootstrap.servers": target, "group.id": "bench-cp",
                       "enable.auto.commit": False})  # fmt: skip
    checkpoints = f"{alias}.checkpoints.internal"
    producer = Producer({"bootstrap.servers": source, "linger.ms": 5})
    lags = []
    try:
        deadline = time.monotonic() + 120
        while end_offsets_one(reader, checkpoints) == 0 and time.monotonic() < deadline:
            producer.produce("bench", b"x" * 100, partition=0)
            producer.poll(0.2)
        reader.assign([TopicPartition(checkpoints, 0, OFFSET_BEGINNING)])
        for _ in range(samples):
            for _ in range(50):  # keep records flowing: offset syncs follow the traffic
                producer.produce("bench", b"x" * 100, partition=0)
            producer.flush(10)
            high = committer.get_watermark_offsets(TopicPartition("bench", 0), timeout=5)[1]
            committed = high - 10
            committer.commit(offsets=[TopicPartition("bench", 0, committed)], asynchronous=False)
            t0 = time.monotonic()
            seen = False
            while not seen and time.monotonic() - t0 < 10 * interval + 30:
                producer.produce("bench", b"x" * 100, partition=0)
                producer.poll(0)
                for m in reader.consume(100, 0.1):
                    if m.error() is None and m.key() and m.value():
                        cp = Checkpoint.decode(m.key(), m.value())
                        if cp.group == group and cp.upstream == committed:
                            seen = True
            if not seen:
                raise TimeoutError("no checkpoint for the committed offset")
            lags.append(time.monotonic() - t0)
    finally:
        mirror.stop()
        reader.close()
        committer.close()
        producer.flush(10)
    return lags


def end_offsets_one(consumer: Consumer, topic: str) -> int:
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=2)[1])
    except Exception:
        return 0


# -- main -------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=300_000, help="100-byte records")
    parser.add_argument("--records-1k", type=int, default=100_000, help="1 KB records")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkpoint-interval", type=int, default=2)
    parser.add_argument("--checkpoint-samples", type=int, default=5)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--copy-loop", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.copy_loop:
        source, target, topic, out, records = args.copy_loop
        copy_loop(source, target, topic, out, int(records))
        return 0

    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    root = Path(tempfile.mkdtemp(prefix="mirror-bench-"))
    log(f"machine: {machine_summary(str(root))}")
    brokers = [Broker(root, "a"), Broker(root, "b")]
    a, b = (x.bootstrap for x in brokers)
    lines = [
        "| records | round | first | plain loop rec/s (CPU µs/rec) | mirror rec/s (CPU µs/rec) "
        "| ratio | load 1/5/15 | other cores |",
        "|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    try:
        for size, records in ((100, args.records), (1024, args.records_1k)):
            topic_dir = f"bench-{size}"
            log(f"filling {records} x {size} B records on A ...")
            # The mirror reads "bench": the source topic is recreated per size on a fresh pair.
            if size != 100:
                for x in brokers:
                    x.stop()
                brokers = [Broker(root, f"a{size}"), Broker(root, f"b{size}")]
                a, b = (x.bootstrap for x in brokers)
            fill(a, "bench", records, size)
            ratios = []
            for r in range(args.rounds):
                order = ("plain", "mirror") if r % 2 == 0 else ("mirror", "plain")
                rates: dict[str, float] = {}
                cpu: dict[str, float] = {}
                meter = CpuMeter()
                load0 = load()
                for which in order:
                    log(f"{topic_dir} round {r + 1}: {which} ...")
                    seconds, cpu[which] = (
                        plain_loop(a, b, "bench", records)
                        if which == "plain"
                        else mirror_run(root, a, b, records)
                    )
                    rates[which] = records / seconds
                    log(f"  {which}: {rates[which]:,.0f} records/s, {cpu[which]:.2f} CPU µs/rec")
                ratio = rates["mirror"] / rates["plain"]
                ratios.append(ratio)
                other = meter.foreign_cores()
                lines.append(
                    f"| {records} x {size} B | {r + 1} | {order[0]} | {rates['plain']:,.0f} "
                    f"({cpu['plain']:.2f}) | {rates['mirror']:,.0f} ({cpu['mirror']:.2f}) | "
                    f"{ratio:.0%} | {load0} -> {load()} | "
                    f"{'-' if other is None else f'{other:.1f}'} |"
                )
            median = statistics.median(ratios)
            verdicts.append(
                f"{size} B: median paired ratio {median:.0%} "
                f"({'meets' if median >= TARGET_RATIO else 'misses'} the 70% target)"
            )
        log("checkpoint lag ...")
        lags = checkpoint_lag(root, a, b, args.checkpoint_interval, args.checkpoint_samples)
        bound = 2 * args.checkpoint_interval
        verdicts.append(
            f"checkpoint lag (emit.checkpoints.interval.seconds={args.checkpoint_interval}): "
            f"median {statistics.median(lags):.2f} s, max {max(lags):.2f} s over {len(lags)} "
            f"commits ({'meets' if max(lags) < bound else 'misses'} the < {bound} s target)"
        )
    finally:
        for x in brokers:
            x.stop()
    out = "\n".join(
        [f"Machine: {machine_summary(str(root))}", "", *lines, "", *(f"- {v}" for v in verdicts)]
    )
    print(out)
    if args.markdown:
        args.markdown.write_text(out + "\n")
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
