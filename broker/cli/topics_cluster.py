"""``sluice topics elect-leaders`` and ``sluice topics reassign``: cluster leadership tools.

They speak Kafka's ElectLeaders / AlterPartitionReassignments / ListPartitionReassignments
APIs through kafka-python's admin client (confluent-kafka has no reassignment API), so they work
against any Kafka-compatible cluster, Sluice's included.
"""

from __future__ import annotations

import time

import typer

from broker.cli._kafka import BootstrapOpt, fail, kafka_python_settings, out
from broker.cli.topics import topics_app

PREFERRED = 0  # ElectLeaders election_type


def _admin(bootstrap: str):  # type: ignore[no-untyped-def]
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    try:
        return KafkaAdminClient(
            bootstrap_servers=bootstrap.split(","), request_timeout_ms=30_000,
            **kafka_python_settings(),
        )  # fmt: skip
    except KafkaError as exc:
        fail(f"cannot reach {bootstrap}: {exc}", "check --bootstrap / SLUICE_BOOTSTRAP")


@topics_app.command("elect-leaders")
def elect_leaders(
    topic: str | None = typer.Option(None, help="Only this topic (default: every partition)."),
    partition: list[int] = typer.Option([], help="Only these partitions of --topic."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Move leadership back to each partition's preferred (first) replica."""
    wanted: dict[str, list[int]] | list[str] | None = None
    if topic is not None:
        wanted = {topic: list(partition)} if partition else [topic]
    admin = _admin(bootstrap)
    try:
        result = admin.elect_leaders(PREFERRED, wanted, raise_errors=False)
    finally:
        admin.close()
    for t in result.replica_election_results:
        for p in t.partition_result:
            code = p.error_code
            status = {0: "elected", 84: "already preferred"}.get(code, f"error {code}")
            out.print(f"{t.topic}-{p.partition_id}: {status}")


@topics_app.command("reassign")
def reassign(
    topic: str = typer.Argument(..., help="Topic whose partition moves."),
    partition: int = typer.Option(..., help="Partition to move."),
    replicas: str = typer.Option(..., help="New replica list, e.g. 2,3,1 (first = preferred)."),
    wait: bool = typer.Option(True, help="Wait until the reassignment has finished."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Move a partition's replicas to other brokers while clients keep going."""
    from kafka.structs import TopicPartition

    try:
        target = [int(b) for b in replicas.split(",") if b.strip()]
    except ValueError:
        fail(f"--replicas must be broker ids like 1,2,3, got {replicas!r}")
    tp = TopicPartition(topic, partition)
    admin = _admin(bootstrap)
    try:
        admin.alter_partition_reassignments({tp: target})
        out.print(f"{topic}-{partition}: reassignment to {target} started")
        deadline = time.monotonic() + 600
        while wait and time.monotonic() < deadline:
            ongoing = admin.list_partition_reassignments([tp])
            if not ongoing:
                out.print(f"{topic}-{partition}: done, replicas {target}")
                return
            time.sleep(0.5)
        if wait:
            fail("the reassignment is still running", "check `sluice topics describe`")
    except Exception as exc:  # kafka-python raises typed KafkaErrors; all end the command
        fail(f"reassignment failed: {exc}")
    finally:
        admin.close()
