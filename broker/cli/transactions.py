"""``sluice transactions list|describe``: the transactions the coordinators know.

Uses Kafka's admin APIs (ListTransactions 66, DescribeTransactions 65, DescribeProducers 61)
through kafka-python's admin client, so it works against Sluice's broker and any
Kafka-compatible cluster. ``list`` asks every broker (each coordinates a slice of the
transactional ids); ``describe`` asks the id's coordinator, then the leaders of the
transaction's partitions for where it starts in each (the offset read_committed consumers
are held at).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from broker.cli._kafka import (
    BOOTSTRAP_HELP,
    DEFAULT_BOOTSTRAP,
    CommandConfigOpt,
    fail,
    kafka_python_settings,
    out,
    use_command_config,
)

transactions_app = typer.Typer(
    help="List and describe transactions (producers with a transactional.id).",
    no_args_is_help=True,
)
BootstrapOpt = typer.Option(DEFAULT_BOOTSTRAP, "--bootstrap", "-b", help=BOOTSTRAP_HELP)


@transactions_app.callback()
def _client_options(command_config: Path | None = CommandConfigOpt) -> None:
    """List and describe transactions (producers with a transactional.id)."""
    use_command_config(command_config)


@contextmanager
def _admin(bootstrap: str) -> Iterator[Any]:
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaError

    try:
        client = KafkaAdminClient(
            bootstrap_servers=bootstrap.split(","), request_timeout_ms=15000,
            **kafka_python_settings(),
        )  # fmt: skip
    except KafkaError as exc:
        fail(f"cannot reach a broker at {bootstrap}: {exc}",
             "start one with `sluice broker` or pass --bootstrap HOST:PORT")  # fmt: skip
    try:
        yield client
    except KafkaError as exc:
        fail(f"{type(exc).__name__}: {exc}")
    finally:
        client.close()


def _state(value: Any) -> str:
    return str(getattr(value, "value", value))


@transactions_app.command("list")
def list_(
    state: list[str] = typer.Option(
        [], "--state", help="Only these states (Ongoing, PrepareCommit, CompleteAbort...)."
    ),
    producer_id: list[int] = typer.Option([], "--producer-id", help="Only these producer ids."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """List transactional ids with their producer id, state and coordinator."""
    with _admin(bootstrap) as admin:
        by_broker = admin.list_transactions(
            state_filters=state or None, producer_id_filters=producer_id or None
        )
    table = Table("transactional id", "producer id", "state", "coordinator", box=None)
    rows = sorted(
        (t.transactional_id, t.producer_id, _state(t.state), node)
        for node, listings in by_broker.items()
        for t in listings
    )
    for txn_id, pid, txn_state, node in rows:
        table.add_row(txn_id, str(pid), txn_state, str(node))
    out.print(table)


@transactions_app.command("describe")
def describe(
    transactional_id: str = typer.Argument(
        ..., help="The producer's transactional.id (as `sluice transactions list` shows it)."
    ),
    bootstrap: str = BootstrapOpt,
) -> None:
    """State, producer, timeout and partitions of one transactional id."""
    with _admin(bootstrap) as admin:
        desc = admin.describe_transactions([transactional_id]).get(transactional_id)
        if desc is None:
            fail(f"transactional id {transactional_id!r} not found")
        partitions = sorted(desc.topic_partitions, key=lambda tp: (tp.topic, tp.partition))
        starts = admin.describe_producers(partitions) if partitions else {}
    started = (
        datetime.fromtimestamp(desc.transaction_start_time_ms / 1000, tz=UTC).isoformat()
        if desc.transaction_start_time_ms >= 0
        else "-"
    )
    out.print(
        f"[bold]{transactional_id}[/bold]  state={_state(desc.state)}  "
        f"producer={desc.producer_id} epoch={desc.producer_epoch}  "
        f"timeout={desc.transaction_timeout_ms} ms  started={started}  "
        f"coordinator={desc.coordinator_id}"
    )
    table = Table("partition", "first offset in transaction", box=None)
    for tp in partitions:
        state = starts.get(tp)
        first = next(
            (
                p.current_transaction_start_offset
                for p in (state.active_producers if state is not None else ())
                if p.producer_id == desc.producer_id
            ),
            -1,
        )
        table.add_row(f"{tp.topic}-{tp.partition}", str(first) if first >= 0 else "-")
    out.print(table)
