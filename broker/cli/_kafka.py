"""What every console/admin command shares: the ``--bootstrap`` option, clients, error exits.

The tools use confluent-kafka only, so they work against Sluice's broker and any other
Kafka-compatible cluster alike. Errors become one red line that says what to do next and a
non-zero exit, never a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from rich.console import Console

DEFAULT_BOOTSTRAP = os.environ.get("SLUICE_BOOTSTRAP", "localhost:9092")
BOOTSTRAP_HELP = "Kafka-compatible bootstrap servers (host:port[,host:port]); env SLUICE_BOOTSTRAP."
TIMEOUT_S = 15.0
PROBE_TIMEOUT_S = 5.0  # how long to look for a broker before telling the user

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def fail(message: str, hint: str | None = None) -> NoReturn:
    """Prints the error and what to do next, then exits with status 1."""
    err.print(f"[red]error:[/red] {message}")
    if hint:
        err.print(f"[dim]hint:[/dim] {hint}")
    raise typer.Exit(1)


def client_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    # librdkafka logs connection failures to stderr by default; silence them, report ours.
    return {"bootstrap.servers": bootstrap, "log_level": 0, **extra}


def admin(bootstrap: str) -> AdminClient:
    client = AdminClient(client_config(bootstrap))
    try:
        client.list_topics(timeout=PROBE_TIMEOUT_S)
    except KafkaException as exc:
        fail(
            f"cannot reach a broker at {bootstrap}: {exc.args[0].str()}",
            "start one with `sluice broker` or pass --bootstrap HOST:PORT",
        )
    return client


def wait(future: Future[Any], what: str) -> Any:
    """Waits for one admin future, turning a Kafka error into a clean exit."""
    try:
        return future.result(timeout=TIMEOUT_S)
    except KafkaException as exc:
        error: KafkaError = exc.args[0]
        fail(f"{what}: {error.str()} ({error.name()})")
    except TimeoutError:
        fail(f"{what}: no answer within {TIMEOUT_S:.0f}s", "is the broker overloaded or down?")


@contextmanager
def kafka_errors(what: str) -> Iterator[None]:
    try:
        yield
    except KafkaException as exc:
        error = exc.args[0]
        text = error.str() if isinstance(error, KafkaError) else str(error)
        fail(f"{what}: {text}")


def parse_configs(pairs: list[str]) -> dict[str, str]:
    """``["k=v", ...]`` -> dict, rejecting entries without ``=``."""
    configs: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"bad --config {pair!r}", "use --config name=value, e.g. retention.ms=60000")
        configs[key.strip()] = value.strip()
    return configs
