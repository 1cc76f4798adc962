"""``sluice groups list|describe|reset-offsets``: consumer groups, their members and lag."""

from __future__ import annotations

import typer
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from rich.table import Table

from broker.cli._kafka import BOOTSTRAP_HELP, DEFAULT_BOOTSTRAP, admin, fail, out, wait
from broker.cli.console import _start_position

groups_app = typer.Typer(help="List, describe and reset consumer groups.", no_args_is_help=True)
BootstrapOpt = typer.Option(DEFAULT_BOOTSTRAP, "--bootstrap", "-b", help=BOOTSTRAP_HELP)


@groups_app.command("list")
def list_(bootstrap: str = BootstrapOpt) -> None:
    """List consumer groups with their state."""
    client = admin(bootstrap)  # keep a reference: the future dies with its client
    result = wait(client.list_consumer_groups(request_timeout=15), "list groups")
    table = Table("group", "state", "type", box=None)
    for listing in sorted(result.valid, key=lambda g: g.group_id):
        state = getattr(listing.state, "name", str(listing.state))
        table.add_row(
            listing.group_id, state, "simple" if listing.is_simple_consumer_group else "consumer"
        )
    out.print(table)


def _committed(client: AdminClient, group: str) -> list[TopicPartition]:
    request = [ConsumerGroupTopicPartitions(group)]
    result = wait(client.list_consumer_group_offsets(request)[group], f"offsets of {group}")
    return [tp for tp in result.topic_partitions if tp.offset >= 0]


def _end_offsets(
    client: AdminClient, tps: list[TopicPartition], spec: OffsetSpec
) -> dict[tuple[str, int], int]:
    if not tps:
        return {}
    futures = client.list_offsets({TopicPartition(tp.topic, tp.partition): spec for tp in tps})
    return {(tp.topic, tp.partition): wait(f, "list offsets").offset for tp, f in futures.items()}


@groups_app.command("describe")
def describe(group: str, bootstrap: str = BootstrapOpt) -> None:
    """Members with their assignments, then committed offset, end offset and lag per partition."""
    client = admin(bootstrap)
    desc = wait(client.describe_consumer_groups([group])[group], f"describe {group}")
    state = getattr(desc.state, "name", str(desc.state))
    out.print(f"[bold]{group}[/bold]  state={state}  protocol={desc.partition_assignor or '-'}")
    members = Table("member", "client", "host", "assigned partitions", box=None)
    owner: dict[tuple[str, int], str] = {}
    for m in desc.members:
        assigned = m.assignment.topic_partitions if m.assignment else []
        for tp in assigned:
            owner[(tp.topic, tp.partition)] = m.member_id
        members.add_row(
            m.member_id,
            m.client_id,
            m.host,
            ", ".join(f"{tp.topic}-{tp.partition}" for tp in assigned),
        )
    if desc.members:
        out.print(members)
    committed = _committed(client, group)
    ends = _end_offsets(client, committed, OffsetSpec.latest())
    lag_table = Table("topic", "partition", "committed", "end", "lag", "member", box=None)
    for tp in sorted(committed, key=lambda t: (t.topic, t.partition)):
        end = ends[(tp.topic, tp.partition)]
        lag_table.add_row(
            tp.topic,
            str(tp.partition),
            str(tp.offset),
            str(end),
            str(max(end - tp.offset, 0)),
            owner.get((tp.topic, tp.partition), "-"),
        )
    out.print(lag_table if committed else "no committed offsets")


@groups_app.command("reset-offsets")
def reset_offsets(
    group: str,
    topic: str = typer.Option(..., "--topic", "-t"),
    to: str = typer.Option(..., "--to", help="beginning, end, an offset, @<epoch ms> or ISO time."),
    execute: bool = typer.Option(False, "--execute", help="Apply; without it, only show the plan."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Move a group's committed offsets for a topic; the group must have no active members."""
    client = admin(bootstrap)
    desc = wait(client.describe_consumer_groups([group])[group], f"describe {group}")
    if desc.members:
        fail(
            f"group {group} has {len(desc.members)} active member(s)",
            "stop its consumers first; offsets of an active group would be overwritten by them",
        )
    meta = client.list_topics(topic=topic, timeout=15).topics.get(topic)
    if meta is None or meta.error is not None:
        fail(f"topic {topic} not found")
    tps = [TopicPartition(topic, p) for p in sorted(meta.partitions)]
    kind, value = _start_position(to)
    if kind == "timestamp":
        spec = OffsetSpec.for_timestamp(value)
    elif value == -2:
        spec = OffsetSpec.earliest()
    elif value == -1:
        spec = OffsetSpec.latest()
    else:
        spec = None
    if spec is None:
        targets = {(tp.topic, tp.partition): value for tp in tps}
    else:
        targets = _end_offsets(client, tps, spec)
        if kind == "timestamp":  # no record at/after that time: go to the end, like Kafka's tool
            latest = _end_offsets(client, tps, OffsetSpec.latest())
            targets = {k: (v if v >= 0 else latest[k]) for k, v in targets.items()}
    table = Table("topic", "partition", "new offset", box=None)
    for (t, p), off in sorted(targets.items()):
        table.add_row(t, str(p), str(off))
    out.print(table)
    if not execute:
        out.print("[yellow]dry run[/yellow]: add --execute to apply")
        return
    request = ConsumerGroupTopicPartitions(
        group, [TopicPartition(t, p, off) for (t, p), off in targets.items()]
    )
    wait(client.alter_consumer_group_offsets([request])[group], f"reset offsets of {group}")
    out.print(f"reset {len(targets)} partition(s) of {group}")
