"""What every console/admin command shares: the ``--bootstrap`` option, clients, error exits.

The tools use the ``kafka_admin`` layer and confluent-kafka only, so they work against Sluice's
broker and any other Kafka-compatible cluster alike. Errors become one red line that says what
to do next and a non-zero exit, never a traceback (``sluice.terminal``: the consoles, tables
and error lines every command shares).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from confluent_kafka import KafkaError, KafkaException

from kafka_admin import KafkaAdmin
from kafka_admin.errors import AdminError
from sluice.client_security import (
    ClientSecurityError,
    read_client_properties,
    to_kafka_python,
    to_librdkafka,
)
from sluice.terminal import err, fail, out

__all__ = [
    "BOOTSTRAP_HELP",
    "COMMAND_CONFIG_HELP",
    "DEFAULT_BOOTSTRAP",
    "PROBE_TIMEOUT_S",
    "TIMEOUT_S",
    "BootstrapOpt",
    "CommandConfigOpt",
    "admin",
    "client_config",
    "command_settings",
    "err",
    "fail",
    "kafka_errors",
    "kafka_python_settings",
    "out",
    "parse_configs",
    "use_command_config",
    "wait",
]  # fmt: skip

DEFAULT_BOOTSTRAP = os.environ.get("SLUICE_BOOTSTRAP", "localhost:9092")
BOOTSTRAP_HELP = "Kafka-compatible bootstrap servers (host:port[,host:port]); env SLUICE_BOOTSTRAP."
TIMEOUT_S = 15.0
PROBE_TIMEOUT_S = 5.0  # how long to look for a broker before telling the user

BootstrapOpt = typer.Option(DEFAULT_BOOTSTRAP, "--bootstrap", "-b", help=BOOTSTRAP_HELP)


COMMAND_CONFIG_HELP = (
    "Client settings file, as Kafka tools' --command-config (security.protocol, sasl.*, ssl.*); "
    "env SLUICE_COMMAND_CONFIG."
)
_command_config: Path | None = None
CommandConfigOpt = typer.Option(None, "--command-config", help=COMMAND_CONFIG_HELP)


def use_command_config(path: Path | None) -> None:
    """Remembers ``--command-config`` for every client this command makes."""
    global _command_config
    if path is not None:
        _command_config = path


def command_settings() -> dict[str, Any]:
    """The ``--command-config`` (or ``$SLUICE_COMMAND_CONFIG``) settings, Java forms
    translated for librdkafka; {} without one. A bad file ends the command in one line."""
    env = os.environ.get("SLUICE_COMMAND_CONFIG")
    path = _command_config or (Path(env) if env else None)
    if path is None:
        return {}
    try:
        return to_librdkafka(read_client_properties(path))
    except ClientSecurityError as exc:
        fail(f"--command-config {path}: {exc}")


def client_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    # librdkafka logs connection failures to stderr by default; silence them, report ours.
    return {"bootstrap.servers": bootstrap, "log_level": 0, **command_settings(), **extra}


def kafka_python_settings() -> dict[str, Any]:
    """The command config as kafka-python keyword arguments (the tools that use it)."""
    return to_kafka_python(command_settings())


def admin(bootstrap: str) -> KafkaAdmin:
    """The admin layer over ``bootstrap``, once a broker answered (else a clean exit)."""
    client = KafkaAdmin(client_config(bootstrap), timeout=TIMEOUT_S)
    try:
        client.admin.list_topics(timeout=PROBE_TIMEOUT_S)
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
    """Kafka, admin-layer and input errors as one clean line and exit 1."""
    try:
        yield
    except KafkaException as exc:
        error = exc.args[0]
        text = error.str() if isinstance(error, KafkaError) else str(error)
        fail(f"{what}: {text}")
    except (AdminError, LookupError, ValueError) as exc:
        fail(f"{what}: {exc}")
    except TimeoutError:
        fail(f"{what}: no answer within {TIMEOUT_S:.0f}s", "is the broker overloaded or down?")


def parse_configs(pairs: list[str]) -> dict[str, str]:
    """``["k=v", ...]`` -> dict, rejecting entries without ``=``."""
    configs: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"bad --config {pair!r}", "use --config name=value, e.g. retention.ms=60000")
        configs[key.strip()] = value.strip()
    return configs
