"""The same 100-byte workload through the other log/stream servers running on this machine.

Each peer uses its usual Python client in its usual high-throughput mode (pipelining, async
publish with acks, batch sends), so the figures say what a Python application gets from each
system here, next to what it gets from Sluice with confluent-kafka. A peer that is not running
or whose client is not installed yields a row with the reason instead of failing the run.

Every peer writes to a stream of its own with a unique name and deletes it afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import struct
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from _common import MESSAGE_SIZE, Budget, Row, port_open

PAYLOAD = b"x" * MESSAGE_SIZE
HOST = "127.0.0.1"


def _run_async(coro: Coroutine[Any, Any, list[Row]]) -> list[Row]:
    """Run a peer's coroutine on uvloop when installed (as Sluice's broker does), else asyncio."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def _rows(
    system: str,
    produced: int,
    produce_s: float,
    consumed: int,
    consume_s: float,
    acks: str,
    notes: tuple[str, str],
) -> list[Row]:
    def row(kind: str, n: int, s: float, note: str) -> Row:
        if n == 0:
            return Row.skipped(system, kind, f"nothing {kind}d in time ({note})")
        rate = n / s if s > 0 else None
        return Row(
            system=system,
            workload=kind,
            partitions="1",
            acks=acks if kind == "produce" else "",
            msgs_per_s=rate,
            mb_per_s=None if rate is None else rate * MESSAGE_SIZE / 1e6,
            note=note,
        )

    return [
        row("produce", produced, produce_s, notes[0]),
        row("consume", consumed, consume_s, notes[1]),
    ]


# --------------------------------------------------------------------------------------- Redis


def redis_streams(count: int, budget: Budget) -> list[Row]:
    """XADD in pipelines of 1,000 (one round trip each), then XREAD COUNT 10,000 from 0-0."""
    system = "Redis Streams"
    try:
        import redis
    except ImportError:
        return [
            Row.skipped(system, "produce/consume", "redis-py not installed (pip install .[bench])")
        ]
    if not port_open(HOST, 6379):
        return [Row.skipped(system, "produce/consume", f"nothing listening on {HOST}:6379")]
    client = redis.Redis(host=HOST, port=6379, socket_timeout=10)
    key = f"sluice-bench-{uuid.uuid4().hex[:8]}"
    try:
        client.ping()
        deadline = budget.phase_deadline()
        sent = 0
        capped_p = False
        start = time.perf_counter()
        while sent < count:
            if time.monotonic() > deadline:
                capped_p = True
                break
            pipe = client.pipeline(transaction=False)
            n = min(1000, count - sent)
            for _ in range(n):
                pipe.xadd(key, {"v": PAYLOAD})
            pipe.execute()
            sent += n
        produce_s = time.perf_counter() - start

        deadline = budget.phase_deadline()
        got = 0
        last_id = "0-0"
        capped_c = False
        start = time.perf_counter()
        while got < sent:
            if time.monotonic() > deadline:
                capped_c = True
                break
            # redis-py's stubs type replies loosely (RESP2 gives [[key, [(id, fields)]]]).
            reply: Any = client.xread({key: last_id}, count=10_000, block=1000)
            if not reply:
                continue
            entries = reply[0][1]
            got += len(entries)
            last_id = entries[-1][0]
        consume_s = time.perf_counter() - start
    except redis.RedisError as exc:
        return [Row.skipped(system, "produce/consume", f"redis error: {exc}")]
    finally:
        with contextlib.suppress(Exception):
            client.delete(key)
        client.close()
    return _rows(
        system,
        sent,
        produce_s,
        got,
        consume_s,
        "reply",
        (
            "pipelined XADD x1000" + (" (time-capped)" if capped_p else ""),
            "XREAD COUNT 10000" + (" (time-capped)" if capped_c else ""),
        ),
    )


# ----------------------------------------------------------------------------- NATS JetStream


async def _nats(count: int, budget: Budget) -> list[Row]:
    system = "NATS JetStream"
    import nats
    from nats.js.api import StorageType, StreamConfig

    nc = await nats.connect(f"nats://{HOST}:4222", connect_timeout=5, allow_reconnect=False)
    js = nc.jetstream(publish_async_max_pending=4000)
    tag = uuid.uuid4().hex[:8]
    stream = f"SLUICE_BENCH_{tag}"
    subject = f"sluicebench.{tag}"
    try:
        await js.add_stream(StreamConfig(name=stream, subjects=[subject], storage=StorageType.FILE))
        deadline = budget.phase_deadline()
        errors: list[str] = []
        acked = [0]

        def on_ack(fut: asyncio.Future[Any]) -> None:
            if fut.cancelled():
                return
            exc = fut.exception()
            if exc is None:
                acked[0] += 1
            elif len(errors) < 5:
                errors.append(repr(exc))

        sent = 0
        capped_p = False
        start = time.perf_counter()
        while sent < count:
            if time.monotonic() > deadline:
                capped_p = True
                break
            # No wait_stall: it wraps every call in wait_for (5x slower); the phase is bounded
            # by the outer wait_for instead.
            fut = await js.publish_async(subject, PAYLOAD)
            fut.add_done_callback(on_ack)
            sent += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                js.publish_async_completed(), max(1.0, deadline + 10 - time.monotonic())
            )
        produce_s = time.perf_counter() - start
        if errors and not acked[0]:
            return [Row.skipped(system, "produce/consume", f"publish failed: {errors[0]}")]

        deadline = budget.phase_deadline()
        target = acked[0]
        got = [0]
        done = asyncio.Event()

        async def on_msg(_msg: object) -> None:
            got[0] += 1
            if got[0] >= target:
                done.set()

        capped_c = False
        start = time.perf_counter()
        # An ordered push consumer (ephemeral, no acks, flow-controlled) is the client's fast
        # path for reading a whole stream; a pull consumer fetching 1,000 at a time measured
        # ~3x slower here.
        sub = await js.subscribe(
            subject, stream=stream, cb=on_msg, ordered_consumer=True, pending_msgs_limit=1_000_000
        )
        try:
            await asyncio.wait_for(done.wait(), max(0.5, deadline - time.monotonic()))
        except TimeoutError:
            capped_c = True
        consume_s = time.perf_counter() - start
        await sub.unsubscribe()
    finally:
        with contextlib.suppress(Exception):
            await js.delete_stream(stream)
        await nc.close()
    return _rows(
        system,
        acked[0],
        produce_s,
        got[0],
        consume_s,
        "PubAck",
        (
            "publish_async, 4000 in flight, file storage" + (" (time-capped)" if capped_p else ""),
            "ordered push consumer" + (" (time-capped)" if capped_c else ""),
        ),
    )


def nats_jetstream(count: int, budget: Budget) -> list[Row]:
    """Async publish with PubAcks (file storage), then an ordered push consumer."""
    system = "NATS JetStream"
    try:
        import nats  # noqa: F401
    except ImportError:
        return [
            Row.skipped(system, "produce/consume", "nats-py not installed (pip install .[bench])")
        ]
    if not port_open(HOST, 4222):
        return [Row.skipped(system, "produce/consume", f"nothing listening on {HOST}:4222")]
    try:
        return _run_async(asyncio.wait_for(_nats(count, budget), budget.phase_cap_s * 2 + 30))
    except Exception as exc:  # a peer's failure is a row, not a crash
        return [Row.skipped(system, "produce/consume", f"{type(exc).__name__}: {exc}")]


# ---------------------------------------------------------------------------- RabbitMQ streams


def _enable_rabbit_stream() -> str | None:
    """Enable the stream plugin if RabbitMQ runs without it; return why not, or None if done."""
    if not port_open(HOST, 5672):
        return f"RabbitMQ not running (nothing on {HOST}:5672)"
    tool = shutil.which("rabbitmq-plugins")
    if tool is None:
        return "stream port 5552 closed and rabbitmq-plugins not found"
    try:
        proc = subprocess.run(
            [tool, "enable", "rabbitmq_stream"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not enable rabbitmq_stream: {exc}"
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]
        return f"rabbitmq-plugins enable rabbitmq_stream failed: {tail[0]}"
    for _ in range(50):
        if port_open(HOST, 5552):
            return None
        time.sleep(0.2)
    return "stream plugin enabled but port 5552 did not open"


async def _rabbit(count: int, budget: Budget) -> list[Row]:
    system = "RabbitMQ streams"
    from rstream import Consumer, ConsumerOffsetSpecification, OffsetType, Producer

    stream = f"sluice-bench-{uuid.uuid4().hex[:8]}"
    confirmed = [0]
    failed = [0]

    def on_confirm(status: object) -> None:
        if getattr(status, "is_confirmed", False):
            confirmed[0] += 1
        else:
            failed[0] += 1

    producer = Producer(HOST, 5552, username="guest", password="guest")
    await producer.start()
    try:
        await producer.create_stream(stream, exists_ok=True)
        deadline = budget.phase_deadline()
        batch = [PAYLOAD] * 1000
        sent = 0
        capped_p = False
        start = time.perf_counter()
        while sent < count:
            if time.monotonic() > deadline:
                capped_p = True
                break
            # Bound what is unconfirmed (like max.in.flight): at most 20 batches outstanding.
            while sent - confirmed[0] - failed[0] > 20_000 and time.monotonic() < deadline:
                await asyncio.sleep(0.0005)
            n = min(1000, count - sent)
            await producer.send_batch(stream, batch[:n], on_publish_confirm=on_confirm)
            sent += n
        settle_end = max(time.monotonic() + 1, deadline + 10)
        while confirmed[0] + failed[0] < sent and time.monotonic() < settle_end:
            await asyncio.sleep(0.001)
        produce_s = time.perf_counter() - start

        deadline = budget.phase_deadline()
        got = [0]
        done = asyncio.Event()
        target = confirmed[0]

        async def on_message(_msg: bytes, _ctx: object) -> None:
            got[0] += 1
            if got[0] >= target:
                done.set()

        consumer = Consumer(HOST, 5552, username="guest", password="guest")
        await consumer.start()
        capped_c = False
        start = time.perf_counter()
        try:
            await consumer.subscribe(
                stream,
                on_message,
                offset_specification=ConsumerOffsetSpecification(OffsetType.FIRST, None),
                initial_credit=50,
            )
            try:
                await asyncio.wait_for(done.wait(), max(0.5, deadline - time.monotonic()))
            except TimeoutError:
                capped_c = True
            consume_s = time.perf_counter() - start
        finally:
            await consumer.close()
    finally:
        with contextlib.suppress(Exception):
            await producer.delete_stream(stream)
        await producer.close()
    return _rows(
        system,
        confirmed[0],
        produce_s,
        got[0],
        consume_s,
        "confirm",
        (
            "send_batch x1000, ≤20k unconfirmed" + (" (time-capped)" if capped_p else ""),
            "subscribe from first, credit 50" + (" (time-capped)" if capped_c else ""),
        ),
    )


def rabbitmq_streams(count: int, budget: Budget) -> list[Row]:
    """Batch send with publish confirms via rstream, then a subscriber from the first offset."""
    system = "RabbitMQ streams"
    try:
        import rstream  # noqa: F401
    except ImportError:
        return [
            Row.skipped(system, "produce/consume", "rstream not installed (pip install .[bench])")
        ]
    if not port_open(HOST, 5552):
        why = _enable_rabbit_stream()
        if why is not None:
            return [Row.skipped(system, "produce/consume", why)]
    try:
        return _run_async(asyncio.wait_for(_rabbit(count, budget), budget.phase_cap_s * 2 + 30))
    except Exception as exc:  # a peer's failure is a row, not a crash
        return [Row.skipped(system, "produce/consume", f"{type(exc).__name__}: {exc}")]


# ------------------------------------------------------------------- end-to-end latency, paced

_STAMP = struct.Struct(">qq")  # send time (perf_counter_ns), sequence number
_PAD = b"x" * (MESSAGE_SIZE - _STAMP.size)


class _Latency:
    """Paces stamped 100-byte payloads at a fixed rate and collects receive - send samples.

    The same scheme as the Kafka latency row: sender and receiver share this process and one
    monotonic clock; due messages are sent in one call per ~0.5 ms tick (each client's batch
    API), and messages sent during the warm-up are not sampled.
    """

    def __init__(self, rate: int, seconds: float, warmup_s: float) -> None:
        self.rate = rate
        self.total = int(rate * seconds)
        self.warm_seq = int(rate * warmup_s)
        self.samples: list[float] = []
        self.received = 0
        self.sent = 0
        self.elapsed = 0.0

    def on_payload(self, payload: bytes) -> None:
        """Record one received payload."""
        now = time.perf_counter_ns()
        if len(payload) < _STAMP.size:
            return
        sent_ns, seq = _STAMP.unpack_from(payload)
        self.received += 1
        if seq >= self.warm_seq:
            self.samples.append((now - sent_ns) / 1e6)

    async def pace(self, send: Callable[[list[bytes]], Awaitable[None]], deadline: float) -> None:
        """Send ``total`` messages at ``rate``, in per-tick batches, until done or deadline."""
        start = time.perf_counter()
        while self.sent < self.total and time.monotonic() < deadline:
            due = min(self.total, int((time.perf_counter() - start) * self.rate))
            if due > self.sent:
                batch = [
                    _STAMP.pack(time.perf_counter_ns(), seq) + _PAD for seq in range(self.sent, due)
                ]
                await send(batch)
                self.sent = due
            await asyncio.sleep(0.0005)
        self.elapsed = time.perf_counter() - start

    async def drain(self, grace_s: float = 3.0) -> None:
        """Give the tail up to ``grace_s`` to arrive."""
        end = time.monotonic() + grace_s
        while self.received < self.sent and time.monotonic() < end:
            await asyncio.sleep(0.01)

    def row(self, system: str, note: str) -> Row:
        """The latency row, in the same shape as the Kafka ones."""
        values = sorted(self.samples)

        def pct(q: float) -> float | None:
            if not values:
                return None
            idx = min(len(values) - 1, max(0, round(q * len(values) + 0.5) - 1))
            return values[idx]

        rate = self.sent / self.elapsed if self.elapsed > 0 else None
        lost = self.sent - self.received
        extra = [note] + ([f"max {values[-1]:.1f} ms"] if values else [])
        if lost:
            extra.append(f"{lost:,} of {self.sent:,} not received")
        return Row(
            system=system,
            workload=f"e2e latency @{self.rate // 1000}k/s",
            partitions="1",
            msgs_per_s=rate,
            mb_per_s=None if rate is None else rate * MESSAGE_SIZE / 1e6,
            p50_ms=pct(0.50),
            p99_ms=pct(0.99),
            note="; ".join(extra),
        )


async def _redis_latency(lat: _Latency, deadline: float) -> Row:
    import redis.asyncio as aredis

    key = f"sluice-bench-lat-{uuid.uuid4().hex[:8]}"
    producer = aredis.Redis(host=HOST, port=6379, socket_timeout=10)
    consumer = aredis.Redis(host=HOST, port=6379, socket_timeout=10)
    stop = asyncio.Event()

    async def read_loop() -> None:
        last = "$"
        while not stop.is_set():
            reply: Any = await consumer.xread({key: last}, count=1000, block=100)
            for _stream, entries in reply or []:
                for entry_id, fields in entries:
                    lat.on_payload(fields[b"v"])
                    last = entry_id

    async def send(batch: list[bytes]) -> None:
        pipe = producer.pipeline(transaction=False)
        for payload in batch:
            pipe.xadd(key, {"v": payload})
        await pipe.execute()

    reader = asyncio.create_task(read_loop())
    try:
        await asyncio.sleep(0.2)  # the blocking XREAD from "$" must be in place first
        await lat.pace(send, deadline)
        await lat.drain()
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(reader, 2)
        with contextlib.suppress(Exception):
            await producer.delete(key)
        await producer.aclose()
        await consumer.aclose()
    return lat.row("Redis Streams", "pipelined XADD per tick, XREAD BLOCK")


async def _nats_latency(lat: _Latency, deadline: float) -> Row:
    import nats
    from nats.js.api import StorageType, StreamConfig

    nc = await nats.connect(f"nats://{HOST}:4222", connect_timeout=5, allow_reconnect=False)
    js = nc.jetstream()
    tag = uuid.uuid4().hex[:8]
    stream, subject = f"SLUICE_BENCH_LAT_{tag}", f"sluicebench.lat.{tag}"
    try:
        await js.add_stream(StreamConfig(name=stream, subjects=[subject], storage=StorageType.FILE))

        async def on_msg(msg: Any) -> None:
            lat.on_payload(msg.data)

        sub = await js.subscribe(subject, stream=stream, cb=on_msg, ordered_consumer=True)

        async def send(batch: list[bytes]) -> None:
            for payload in batch:
                await js.publish_async(subject, payload)

        await lat.pace(send, deadline)
        await lat.drain()
        await sub.unsubscribe()
    finally:
        with contextlib.suppress(Exception):
            await js.delete_stream(stream)
        await nc.close()
    return lat.row("NATS JetStream", "publish_async, ordered push consumer")


async def _rabbit_latency(lat: _Latency, deadline: float) -> Row:
    from rstream import Consumer, ConsumerOffsetSpecification, OffsetType, Producer

    stream = f"sluice-bench-lat-{uuid.uuid4().hex[:8]}"
    producer = Producer(HOST, 5552, username="guest", password="guest")
    consumer = Consumer(HOST, 5552, username="guest", password="guest")
    await producer.start()
    try:
        await producer.create_stream(stream, exists_ok=True)
        await consumer.start()

        async def on_message(msg: bytes, _ctx: object) -> None:
            lat.on_payload(bytes(msg))

        await consumer.subscribe(
            stream,
            on_message,
            offset_specification=ConsumerOffsetSpecification(OffsetType.NEXT, None),
        )

        async def send(batch: list[bytes]) -> None:
            await producer.send_batch(stream, batch)

        await asyncio.sleep(0.2)
        await lat.pace(send, deadline)
        await lat.drain()
        await consumer.close()
    finally:
        with contextlib.suppress(Exception):
            await producer.delete_stream(stream)
        await producer.close()
    return lat.row("RabbitMQ streams", "send_batch per tick, subscriber")


_LATENCY_RUNNERS: dict[str, Callable[[_Latency, float], Coroutine[Any, Any, Row]]] = {
    "Redis Streams": _redis_latency,
    "NATS JetStream": _nats_latency,
    "RabbitMQ streams": _rabbit_latency,
}


def peer_latency(
    system: str, rate: int, seconds: float, warmup_s: float, budget: Budget
) -> list[Row]:
    """End-to-end latency at a fixed rate through one peer, as for the Kafka rows."""
    runner = _LATENCY_RUNNERS[system]
    lat = _Latency(rate, seconds, warmup_s)
    deadline = budget.phase_deadline(seconds + 5)

    async def go() -> list[Row]:
        return [await asyncio.wait_for(runner(lat, deadline), seconds + 20)]

    try:
        return _run_async(go())
    except Exception as exc:  # a peer's failure is a row, not a crash
        return [
            Row.skipped(system, f"e2e latency @{rate // 1000}k/s", f"{type(exc).__name__}: {exc}")
        ]
