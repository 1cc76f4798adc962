"""``sluice produce`` and ``sluice consume``: the console producer and consumer.

``consume`` without ``--group`` assigns partitions directly and commits nothing, so tailing a
topic never moves anybody's committed offsets; with ``--group`` it joins that group and commits
what it printed.

Both show a progress bar on stderr for long runs (``sluice.terminal.progress``): ``produce``
against the input file's size, ``consume`` against ``-n`` or the messages up to the end; never
on stdout, which carries only messages, and not while messages print to the same terminal.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import IO, Any

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
    PROBE_TIMEOUT_S,
    BootstrapOpt,
    CommandConfigOpt,
    client_config,
    err,
    fail,
    kafka_errors,
    parse_configs,
    use_command_config,
)
from sluice.terminal import ProgressOpt, progress

TopicArg = typer.Argument(..., help="The topic's name.")


@contextmanager
def _input(path: Path | None) -> Iterator[tuple[IO[bytes], int | None]]:
    """The lines to produce (``--file`` or stdin) and their size in bytes when known."""
    if path is None:
        stream: IO[bytes] = sys.stdin.buffer
        try:  # a regular file redirected to stdin has a size; a pipe or terminal has none
            info = os.fstat(stream.fileno())
            size = info.st_size if stat.S_ISREG(info.st_mode) else None
        except (OSError, ValueError):  # no file descriptor (an in-memory stdin)
            size = None
        yield stream, size
        return
    try:
        handle = path.open("rb")
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")
    with handle:
        yield handle, os.fstat(handle.fileno()).st_size


def produce(
    topic: str = TopicArg,
    key_separator: str | None = typer.Option(
        None, "--key-separator", "-K", help="Split each line into key and value at the first SEP."
    ),
    partition: int | None = typer.Option(
        None, "--partition", "-p", help="Send every message to this partition (default: by key)."
    ),
    header: list[str] = typer.Option([], "--header", "-H", help="name=value, repeatable."),
    acks: str = typer.Option("all", "--acks", help="0, 1 or all."),
    compression: str = typer.Option("none", "--compression", help="none|gzip|snappy|lz4|zstd"),
    file: Path | None = typer.Option(
        None, "--file", "-f", dir_okay=False, help="Read the lines from this file, not stdin."
    ),
    show_progress: bool = ProgressOpt,
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """Produce one message per line of standard input (or --file)."""
    use_command_config(command_config)
    headers: list[tuple[str, str | bytes | None]] = list(parse_configs(header).items())
    producer = Producer(
        client_config(bootstrap, acks=acks, **{"compression.type": compression, "linger.ms": 5})
    )
    failures: list[str] = []

    def on_delivery(error: Any, _msg: Message) -> None:
        if error is not None:
            failures.append(error.str())

    sent = 0
    extra: dict[str, Any] = {} if partition is None else {"partition": partition}
    with (
        kafka_errors(f"produce to {topic}"),
        _input(file) as (lines, size),
        progress(f"produce to {topic}", total=size, force=show_progress, unit="messages") as bar,
    ):
        for line in lines:
            bar.advance(len(line), items=1)
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


def start_position(spec: str) -> tuple[str, int]:
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

        def text(b: str | bytes | None) -> str | None:
            if b is None or isinstance(b, str):
                return b
            return b.decode("utf-8", "replace")

        return json.dumps(
            {
                "topic": msg.topic(),
                "partition": msg.partition(),
                "offset": msg.offset(),
                "timestamp": ts,
                "key": text(msg.key()),
                "value": text(value),
                "headers": {k: text(v) for k, v in list(msg.headers() or [])},
            }
        )
    body = "" if value is None else value.decode("utf-8", "replace")
    if print_key:
        key = msg.key()
        return f"{'' if key is None else key.decode('utf-8', 'replace')}\t{body}"
    return body


def consume(
    topic: str = TopicArg,
    start: str = typer.Option(
        "beginning", "--from", help="beginning, end, an offset, @<epoch ms> or an ISO timestamp."
    ),
    partition: int | None = typer.Option(
        None, "--partition", "-p", help="Read only this partition (default: all)."
    ),
    group: str | None = typer.Option(None, "--group", "-g", help="Join this group and commit."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep tailing after the end."),
    max_messages: int | None = typer.Option(
        None, "--max-messages", "-n", min=1, help="Stop after this many messages."
    ),
    fmt: str = typer.Option("value", "--format", help="value or json."),
    print_key: bool = typer.Option(False, "--print-key", help="Print key<TAB>value."),
    idle_timeout: float = typer.Option(
        5.0, "--idle-timeout", help="With --group and no --follow: stop after this many idle s."
    ),
    show_progress: bool = ProgressOpt,
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """Print messages of a topic, by default from the beginning up to its current end."""
    use_command_config(command_config)
    kind, position = start_position(start)
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
    total: int | None = max_messages  # what the bar counts to, when known
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
                expected = 0
                for p in partitions:
                    low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=15)
                    if high > low:
                        remaining.add(p)
                    if kind == "offset" and position >= 0:
                        expected += max(0, high - max(low, position))
                    elif position == OFFSET_BEGINNING:
                        expected += high - low
                if not remaining or position == OFFSET_END:
                    consumer.close()
                    return
                if kind == "offset":
                    total = expected if max_messages is None else min(expected, max_messages)
        idle_since = time.monotonic()
        bar_context = progress(
            f"consume {topic}",
            total=total,
            force=show_progress,
            unit="messages",
            beside_output=True,
        )
        try:
            with bar_context as bar:
                while max_messages is None or printed < max_messages:
                    msg = consumer.poll(0.5)
                    if msg is None:
                        if group and not follow and time.monotonic() - idle_since > idle_timeout:
                            break
                        continue
                    idle_since = time.monotonic()
                    error = msg.error()
                    if error is not None:
                        if error.code() == -191:  # _PARTITION_EOF
                            remaining.discard(msg.partition())
                            if not follow and not group and not remaining:
                                break
                            continue
                        fail(f"consume {topic}: {error.str()}")
                    sys.stdout.write(_render(msg, fmt, print_key) + "\n")
                    printed += 1
                    bar.advance()
        except KeyboardInterrupt:
            pass
        finally:
            sys.stdout.flush()
            consumer.close()
    err.print(f"consumed {printed} message(s)")


def register(app: typer.Typer) -> None:
    app.command()(produce)
    app.command()(consume)
