"""Kafka-protocol workloads (confluent-kafka) and the two servers they run against.

The same functions drive Sluice and librdkafka's mock cluster, with identical client configs, so
the ratio Sluice / mock isolates the broker: the client, the payloads, the loopback path and the
measuring code are shared.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from _common import MESSAGE_SIZE, free_port, port_open
from confluent_kafka import (
    OFFSET_END,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parent.parent

PRODUCER_CONFIG: dict[str, object] = {
    # Throughput settings shared by Sluice and the mock (the comparison is only fair if equal):
    # small linger so batches fill at high rates without adding much latency at low rates, 1 MB
    # batches, no compression (the broker stores batches verbatim, so codecs would measure the
    # client's CPU, not the broker), and a deep local queue so produce() rarely blocks.
    "linger.ms": 5,
    "batch.size": 1_000_000,
    "batch.num.messages": 10_000,
    "compression.type": "none",
    "queue.buffering.max.messages": 1_000_000,
    "queue.buffering.max.kbytes": 1_048_576,
    "message.timeout.ms": 60_000,
    "log_level": 3,
}

CONSUMER_CONFIG: dict[str, object] = {
    # Assign-based consumption (no group rebalance in the measured path); prefetch deep so the
    # client never starves between fetches; fetch.wait.max.ms bounds long-poll waits.
    "enable.auto.commit": False,
    "enable.partition.eof": False,
    "auto.offset.reset": "earliest",
    "fetch.wait.max.ms": 100,
    "queued.min.messages": 1_000_000,
    "log_level": 3,
}

PAYLOAD = b"x" * MESSAGE_SIZE


class Target(Protocol):
    """A Kafka-protocol server the workloads can run against."""

    name: str
    bootstrap: str
    pid: int | None

    def create_topics(self, topics: Iterable[tuple[str, int]], timeout_s: float) -> None:
        """Create each (name, partitions) topic or raise RuntimeError with the broker's reason."""

    def close(self) -> None:
        """Stop the server if this benchmark started it."""


class TargetError(RuntimeError):
    """A server could not be started or used; the message is shown as the row's reason."""


def _admin_create(bootstrap: str, topics: list[tuple[str, int]], timeout_s: float) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=parts, replication_factor=1) for name, parts in topics],
        operation_timeout=timeout_s,
        request_timeout=timeout_s,
    )
    errors = []
    for name, fut in futures.items():
        try:
            fut.result(timeout=timeout_s + 5)
        except KafkaException as exc:
            err = exc.args[0]
            if err.code() != KafkaError.TOPIC_ALREADY_EXISTS:
                errors.append(f"{name}: {err.str()}")
        except Exception as exc:  # any failure becomes the row's reason
            errors.append(f"{name}: {exc!r}")
    if errors:
        raise TargetError(f"CreateTopics failed: {errors[0]}" + (" …" if len(errors) > 1 else ""))


class SluiceBroker:
    """``sluice broker`` as a subprocess on a free loopback port with a throw-away data dir.

    A subprocess (not an in-process server) because that is how users run it, and because the
    client's Python loop must not share a GIL with the broker it measures.
    """

    name = "Sluice"

    def __init__(
        self,
        startup_timeout_s: float = 30.0,
        data_root: str | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.data_dir = Path(tempfile.mkdtemp(prefix="sluice-bench-", dir=data_root))
        self.log_path = self.data_dir.with_suffix(".log")
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - lives as long as the broker
        cmd = [
            sys.executable,
            "-m",
            "sluice",
            "broker",
            "--data-dir",
            str(self.data_dir / "data"),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *extra_args,
        ]
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        self.pid: int | None = self.proc.pid
        try:
            self._wait_ready(startup_timeout_s)
        except BaseException:
            self.close()
            raise

    def _log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text[-lines:])

    def _wait_ready(self, timeout_s: float) -> None:
        """Ready = the port accepts and a Metadata request through librdkafka succeeds."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TargetError(
                    f"broker exited with code {self.proc.returncode}: {self._log_tail()}"
                )
            if port_open("127.0.0.1", self.port):
                break
            time.sleep(0.1)
        else:
            raise TargetError(f"broker did not listen within {timeout_s:.0f}s: {self._log_tail()}")
        probe = Producer({"bootstrap.servers": self.bootstrap, "log_level": 0})
        while time.monotonic() < deadline:
            try:
                probe.list_topics(timeout=max(0.5, min(3.0, deadline - time.monotonic())))
                return
            except KafkaException:
                if self.proc.poll() is not None:
                    break
        raise TargetError(f"broker never answered Metadata: {self._log_tail()}")

    def create_topics(self, topics: Iterable[tuple[str, int]], timeout_s: float = 30.0) -> None:
        """Create topics through the Kafka admin API, as any client would."""
        _admin_create(self.bootstrap, list(topics), timeout_s)

    def close(self) -> None:
        """SIGTERM, then SIGKILL after 10 s; the data dir is deleted either way."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.log_path.unlink()


class ExternalBroker:
    """A broker someone else started (``--bootstrap``), e.g. to profile it by hand."""

    name = "Sluice"

    def __init__(self, bootstrap: str, pid: int | None) -> None:
        self.bootstrap = bootstrap
        self.pid = pid

    def create_topics(self, topics: Iterable[tuple[str, int]], timeout_s: float = 30.0) -> None:
        """Create topics through the Kafka admin API."""
        _admin_create(self.bootstrap, list(topics), timeout_s)

    def close(self) -> None:
        """Not ours to stop."""


class MockCluster:
    """librdkafka's mock cluster hosted by ``_mock_cluster.py`` in its own process."""

    name = "librdkafka mock"

    def __init__(self, timeout_s: float = 15.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("_mock_cluster.py"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.pid: int | None = self.proc.pid
        self._lock = threading.Lock()
        line = self._readline(timeout_s)
        if not line.startswith("BOOTSTRAP "):
            self.close()
            raise TargetError(f"mock cluster failed to start: {line.strip() or 'no output'}")
        self.bootstrap = line.split()[1]

    def _readline(self, timeout_s: float) -> str:
        """Read one reply line, bounded in time (a hung child must not hang the bench)."""
        result: list[str] = []
        reader = threading.Thread(
            target=lambda: result.append(self.proc.stdout.readline()),  # type: ignore[union-attr]
            daemon=True,
        )
        reader.start()
        reader.join(timeout_s)
        return result[0] if result else ""

    def create_topics(self, topics: Iterable[tuple[str, int]], timeout_s: float = 15.0) -> None:
        """Create topics with the mock's C API (it has no CreateTopics request handler)."""
        with self._lock:
            for name, parts in topics:
                assert self.proc.stdin is not None
                self.proc.stdin.write(f"create {name} {parts}\n")
                self.proc.stdin.flush()
                reply = self._readline(timeout_s).strip()
                if reply != "ok":
                    raise TargetError(f"mock topic create {name}: {reply or 'no reply'}")

    def close(self) -> None:
        """Ask the host to quit; kill it if it does not."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)


@dataclass
class ProduceResult:
    """What a produce phase achieved: ``delivered`` acknowledged messages in ``seconds``."""

    delivered: int
    seconds: float
    errors: int
    first_error: str
    capped: bool
    repeats: list[float] = field(default_factory=list)  # every repeat's rate, when best-of

    @property
    def rate(self) -> float:
        """Acknowledged messages per second."""
        return self.delivered / self.seconds if self.seconds > 0 else 0.0


def _producer(bootstrap: str, acks: str, errors: list[str]) -> Producer:
    def on_delivery(err: KafkaError | None, _msg: object) -> None:
        # Only called for failures (delivery.report.only.error): counting successes in Python
        # would add a callback per message and lower both Sluice's and the ceiling's figures.
        if err is not None:
            errors.append(err.str())

    conf = dict(PRODUCER_CONFIG)
    conf.update(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "delivery.report.only.error": True,
            "on_delivery": on_delivery,
        }
    )
    return Producer(conf)


def produce_throughput(
    bootstrap: str, topic: str, count: int, acks: str, deadline: float
) -> ProduceResult:
    """Produce ``count`` 100-byte messages as fast as the client allows; time until all acked.

    The clock starts after one warm-up message is acknowledged, so connection setup and
    metadata lookups are not counted. If ``deadline`` hits, production stops and the messages
    acknowledged so far are reported over the time spent (``capped``).
    """
    errors: list[str] = []
    producer = _producer(bootstrap, acks, errors)
    producer.produce(topic, PAYLOAD)
    left = producer.flush(max(1.0, min(15.0, deadline - time.monotonic())))
    if left or errors:
        reason = errors[0] if errors else "warm-up message not acknowledged"
        raise TargetError(f"produce to {topic} failed: {reason}")
    produce = producer.produce
    poll = producer.poll
    sent = 0
    capped = False
    start = time.perf_counter()
    while sent < count:
        if time.monotonic() > deadline:
            capped = True
            break
        chunk = min(10_000, count - sent)
        for _ in range(chunk):
            try:
                produce(topic, PAYLOAD)
            except BufferError:
                # Local queue full: let delivery reports drain, then retry once per wait.
                poll(0.005)
                if time.monotonic() > deadline:
                    capped = True
                    break
                try:
                    produce(topic, PAYLOAD)
                except BufferError:
                    continue
            sent += 1
        if capped:
            break
        poll(0)
    left = producer.flush(max(0.5, deadline + 10 - time.monotonic()))
    seconds = time.perf_counter() - start
    if left:
        capped = True
        # Messages still queued were not acknowledged; purge so the producer can be dropped.
        with contextlib.suppress(Exception):
            producer.purge()
            producer.flush(1)
    delivered = max(0, sent - left - len(errors))
    return ProduceResult(delivered, seconds, len(errors), errors[0] if errors else "", capped)


@dataclass
class ConsumeResult:
    """What a consume phase achieved: ``messages`` counted over ``seconds`` of streaming."""

    messages: int
    seconds: float
    passes: int
    errors: int
    first_error: str
    capped: bool
    repeats: list[float] = field(default_factory=list)  # every repeat's rate, when best-of

    @property
    def rate(self) -> float:
        """Consumed messages per second."""
        return self.messages / self.seconds if self.seconds > 0 else 0.0


def consume_throughput(
    bootstrap: str, topic: str, partitions: int, count: int, deadline: float
) -> ConsumeResult:
    """Read ``count`` messages from the start of ``topic`` with ``consume()`` batches.

    Each pass assigns every partition at its log start and reads to the high watermark seen
    when the phase began; the clock runs from the first returned batch to the last one of each
    pass (messages in the first batch are not counted), so fetch start-up is excluded the same
    way for every server. Sluice retains everything, so one pass reads ``count`` messages; the
    mock keeps only the newest ~5 MB per partition, so it needs several passes over that
    window, which is why passes exist at all.
    """
    conf = dict(CONSUMER_CONFIG)
    conf.update({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:8]}"})
    consumer = Consumer(conf)
    errors: list[str] = []
    try:
        marks = []
        for p in range(partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            marks.append((low, high))
        window = sum(high - low for low, high in marks)
        if window <= 0:
            raise TargetError(f"{topic} is empty (watermarks {marks})")
        counted = 0  # messages inside timed intervals (first batch of a pass excluded)
        total = 0  # every message read, for the stop condition
        busy = 0.0
        passes = 0
        capped = False
        while total < count:
            if time.monotonic() > deadline:
                capped = True
                break
            consumer.assign([TopicPartition(topic, p, marks[p][0]) for p in range(partitions)])
            got = 0
            first_at: float | None = None
            last_at = 0.0
            while got < window and total < count:
                if time.monotonic() > deadline:
                    capped = True
                    break
                # Ask for no more than what is left: consume() waits for the full count or
                # the timeout, and a tail wait would be billed to the server.
                batch = consumer.consume(min(10_000, window - got), 0.5)
                if not batch:
                    continue
                now = time.perf_counter()
                bad = [m for m in batch if m.error() is not None]
                if bad:
                    errors.extend(str(m.error()) for m in bad[:3])
                good = len(batch) - len(bad)
                got += good
                total += good
                if first_at is None:
                    first_at = now
                    continue
                counted += good
                last_at = now
                if len(errors) > 100:
                    raise TargetError(f"consume errors: {errors[0]}")
            if first_at is not None and last_at > first_at:
                busy += last_at - first_at
            passes += 1
            consumer.unassign()
            if got == 0:
                break
        return ConsumeResult(
            counted, busy, passes, len(errors), errors[0] if errors else "", capped
        )
    finally:
        consumer.close()


@dataclass
class LatencyResult:
    """End-to-end latency samples (ms) of a paced run."""

    sent: int
    received: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    rate: float


def _percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return float("nan")
    idx = min(len(sorted_values) - 1, max(0, round(q * len(sorted_values) + 0.5) - 1))
    return sorted_values[idx]


def e2e_latency(
    bootstrap: str,
    topic: str,
    rate: int,
    seconds: float,
    warmup_s: float,
    deadline: float,
) -> LatencyResult:
    """Send at a fixed ``rate`` for ``seconds`` with acks=1; measure receive time - send time.

    Each 100-byte payload starts with the send time (perf_counter_ns) and a sequence number;
    producer and consumer share this process, so one monotonic clock serves both. The consumer
    thread uses ``poll()`` (returns per message) rather than ``consume(n)`` (waits for ``n``),
    and messages sent during the first ``warmup_s`` are not sampled.
    """
    conf = dict(CONSUMER_CONFIG)
    conf.update({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:8]}"})
    consumer = Consumer(conf)
    consumer.assign([TopicPartition(topic, 0, OFFSET_END)])
    # Let the consumer resolve OFFSET_END and start fetching before the first send.
    ready_by = time.monotonic() + 5
    while time.monotonic() < ready_by:
        consumer.poll(0.1)
        positions = consumer.position([TopicPartition(topic, 0)])
        if positions and positions[0].offset >= 0:
            break
    samples: list[float] = []
    received = [0]
    stop = threading.Event()
    warm_seq = int(rate * warmup_s)
    header = struct.Struct(">qq")

    def consume_loop() -> None:
        while not stop.is_set():
            msg = consumer.poll(0.05)
            if msg is None or msg.error() is not None:
                continue
            now = time.perf_counter_ns()
            value = msg.value()
            if value is None or len(value) < header.size:
                continue
            sent_ns, seq = header.unpack_from(value)
            received[0] += 1
            if seq >= warm_seq:
                samples.append((now - sent_ns) / 1e6)

    thread = threading.Thread(target=consume_loop, name="latency-consumer", daemon=True)
    thread.start()
    errors: list[str] = []
    producer = _producer(bootstrap, "1", errors)
    pad = b"x" * (MESSAGE_SIZE - header.size)
    total = int(rate * seconds)
    sent = 0
    start = time.perf_counter()
    try:
        while sent < total and time.monotonic() < deadline:
            due = min(total, int((time.perf_counter() - start) * rate))
            while sent < due:
                producer.produce(topic, header.pack(time.perf_counter_ns(), sent) + pad)
                sent += 1
            producer.poll(0)
            time.sleep(0.0002)
        elapsed = time.perf_counter() - start
        producer.flush(max(1.0, min(10.0, deadline + 5 - time.monotonic())))
        # Grace period for the tail to arrive, bounded.
        grace_end = time.monotonic() + 3
        while received[0] < sent and time.monotonic() < grace_end:
            time.sleep(0.02)
    finally:
        stop.set()
        thread.join(5)
        consumer.close()
    values = sorted(samples)
    return LatencyResult(
        sent=sent,
        received=received[0],
        p50_ms=_percentile(values, 0.50),
        p99_ms=_percentile(values, 0.99),
        max_ms=values[-1] if values else float("nan"),
        rate=sent / elapsed if elapsed > 0 else 0.0,
    )


def fill_partitions(
    target: Target, topics: int, partitions: int, deadline: float, prefix: str
) -> int:
    """Create ``topics`` x ``partitions`` and write one message to each partition.

    Returns the number of partitions written. Written once each so every partition has opened
    its segment files and indexes: an empty partition can be lazily cheaper than a live one.
    """
    names = [f"{prefix}-{i:03d}" for i in range(topics)]
    for i in range(0, len(names), 20):
        if time.monotonic() > deadline:
            raise TargetError("time budget ran out while creating topics")
        target.create_topics([(n, partitions) for n in names[i : i + 20]], timeout_s=60)
    errors: list[str] = []
    producer = _producer(target.bootstrap, "1", errors)
    for name in names:
        for p in range(partitions):
            producer.produce(name, PAYLOAD, partition=p)
        producer.poll(0)
    left = producer.flush(max(1.0, deadline - time.monotonic()))
    if left or errors:
        raise TargetError(
            f"writing one message per partition: {left} unacknowledged"
            + (f", {errors[0]}" if errors else "")
        )
    return topics * partitions


def librdkafka_version() -> str:
    """``confluent-kafka X / librdkafka Y`` for the table header."""
    import confluent_kafka

    return (
        f"confluent-kafka {confluent_kafka.__version__} / "
        f"librdkafka {confluent_kafka.libversion()[0]}"
    )


def data_root() -> str:
    """Where the broker's throw-away data dir goes: $SLUICE_BENCH_DIR or the system temp dir."""
    return os.environ.get("SLUICE_BENCH_DIR") or tempfile.gettempdir()
