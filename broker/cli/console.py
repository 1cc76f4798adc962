"""``sluice produce`` and ``sluice consume``: the console producer and consumer.

``consume`` without ``--group`` assigns partitions directly and commits nothing, so tailing a
topic never moves anybody's committed offsets; with ``--group`` it joins that group and commits
what it printed.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from typing import Any

import typer
from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    Consumer,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from broker.cli._kafka import (
    BOOTSTRAP_HELP,
    DEFAULT_BOOTSTRAP,
    PROBE_TIMEOUT_S,
    client_config,
    err,
    fail,
    kafka_errors,
    parse_configs,
)

BootstrapOpt = typer.Option(DEFAULT_BOOTSTRAP, "--bootstrap", "-b", help=BOOTSTRAP_HELP)


def produce(
    topic: str,
    key_separator: str | None = typer.Option(
        None, "--key-separator", "-K", help="Split each line into key and value at the first SEP."
    ),
    partition: int | None = typer.Option(None, "--partition", "-p"),
    header: list[str] = typer.Option([], "--header", "-H", help="name=value, repeatable."),
    acks: str = typer.Option("all", "--acks", help="0, 1 or all."),
    compression: str = typer.Option("none", "--compression", help="none|gzip|snappy|lz4|zstd"),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Produce one message per line of standard input."""
    headers = list(parse_configs(header).items())
    producer = Producer(
        client_config(bootstrap, acks=acks, **{"compression.type": compression, "linger.ms": 5})
    )
    failures: list[str] = []

    def on_delivery(error: Any, _msg: Message) -> None:
        if error is not None:
            failures.append(error.str())

    sent = 0
    extra: dict[str, Any] = {} if partition is None else {"partition": partition}
    with kafka_errors(f"produce to {topic}"):
        for line in sys.stdin.buffer:
            value = line.rstrip(b"\r\n")
            key = None
            if key_separator is not None:
                key, sep, rest = value.partition(key_separator.encode())
                value = rest if sep else key
                key = key if sep else None
            while True:
                try:
                    producer.produce(
                        topic, value, key, headers=headers, on_delivery=on_delivery, **extra
                    )
                    break
                except BufferError:  # local queue full: let deliveries drain
                    producer.poll(0.1)
            sent += 1
            producer.poll(0)
        remaining = producer.flush(30)
    if remaining or failures:
        reason = failures[0] if failures else "delivery timed out"
        fail(
            f"{len(failures) + remaining} of {sent} message(s) not delivered to {topic}: {reason}",
            "check the broker is up (`sluice topics list`) and the topic exists",
        )
    err.print(f"produced {sent} message(s) to {topic}")


def _start_position(spec: str) -> tuple[str, int]:
    """``beginning|end|<offset>|<timestamp>`` -> (kind, value) with kind offset/timestamp."""
    if spec == "beginning":
        return "offset", OFFSET_BEGINNING
    if spec == "end":
        return "offset", OFFSET_END
    if spec.isdigit():
        return "offset", int(spec)
    if spec.startswith("@") and spec[1:].isdigit():
        return "timestamp", int(spec[1:])
    try:
        moment = datetime.fromisoformat(spec.removeprefix("@"))
    except ValueError:
        fail(f"bad --from {spec!r}", "use beginning, end, an offset, @<epoch ms> or an ISO time")
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return "timestamp", int(moment.timestamp() * 1000)


def _render(msg: Message, fmt: str, print_key: bool) -> str:
    value = msg.value()
    if fmt == "json":
        _, ts = msg.timestamp()

        def text(b: bytes | None) -> str | None:
            return None if b is None else b.decode("utf-8", "replace")

        return json.dumps(
            {
                "topic": msg.topic(),
                "partition": msg.partition(),
                "offset": msg.offset(),
                "timestamp": ts,
                "key": text(msg.key()),
                "value": text(value),
                "headers": {k: text(v) for k, v in (msg.headers() or [])},
            }
        )
    body = "" if value is None else value.decode("utf-8", "replace")
    if print_key:
        key = msg.key()
        return f"{'' if key is None else key.decode('utf-8', 'replace')}\t{body}"
    return body


def consume(
    topic: str,
    start: str = typer.Option(
        "beginning", "--from", help="beginning, end, an offset, @<epoch ms> or an ISO timestamp."
    ),
    partition: int | None = typer.Option(None, "--partition", "-p"),
    group: str | None = typer.Option(None, "--group", "-g", help="Join this group and commit."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep tailing after the end."),
    max_messages: int | None = typer.Option(None, "--max-messages", "-n", min=1),
    fmt: str = typer.Option("value", "--format", help="value or json."),
    print_key: bool = typer.Option(False, "--print-key", help="Print key<TAB>value."),
    idle_timeout: float = typer.Option(
        5.0, "--idle-timeout", help="With --group and no --follow: stop after this many idle s."
    ),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Print messages of a topic, by default from the beginning up to its current end."""
    kind, position = _start_position(start)
    config = client_config(
        bootstrap,
        **{
            "group.id": group or "sluice-console",
            "enable.auto.commit": bool(group),
            "auto.offset.reset": "latest" if position == OFFSET_END else "earliest",
            "enable.partition.eof": True,
        },
    )
    consumer = Consumer(config)
    printed = 0
    with kafka_errors(f"consume {topic}"):
        try:
            metadata = consumer.list_topics(topic, timeout=PROBE_TIMEOUT_S).topics.get(topic)
        except KafkaException as exc:
            consumer.close()
            fail(
                f"cannot reach a broker at {bootstrap}: {exc.args[0].str()}",
                "start one with `sluice broker` or pass --bootstrap HOST:PORT",
            )
        if metadata is None or metadata.error is not None:
            fail(f"topic {topic} not found", "list topics with `sluice topics list`")
        partitions = [partition] if partition is not None else sorted(metadata.partitions)
        remaining: set[int] = set()
        if group:
            consumer.subscribe([topic])
        else:
            tps = [TopicPartition(topic, p, position) for p in partitions]
            if kind == "timestamp":
                tps = consumer.offsets_for_times(tps, timeout=15)
                tps = [
                    tp if tp.offset >= 0 else TopicPartition(topic, tp.partition, OFFSET_END)
                    for tp in tps
                ]
            consumer.assign(tps)
            if not follow:
                for p in partitions:
                    low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=15)
                    if high > low:
                        remaining.add(p)
                if not remaining or position == OFFSET_END:
                    consumer.close()
                    return
        idle_since = time.monotonic()
        try:
            while max_messages is None or printed < max_messages:
                msg = consumer.poll(0.5)
                if msg is None:
                    if group and not follow and time.monotonic() - idle_since > idle_timeout:
                        break
                    continue
                idle_since = time.monotonic()
                if msg.error():
                    if msg.error().code() == -191:  # _PARTITION_EOF
                        remaining.discard(msg.partition())
                        if not follow and not group and not remaining:
                            break
                        continue
                    fail(f"consume {topic}: {msg.error().str()}")
                sys.stdout.write(_render(msg, fmt, print_key) + "\n")
                printed += 1
        except KeyboardInterrupt:
            pass
        finally:
            sys.stdout.flush()
            consumer.close()
    err.print(f"consumed {printed} message(s)")


def register(app: typer.Typer) -> None:
    app.command()(produce)
    app.command()(consume)
