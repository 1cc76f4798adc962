"""``sluice groups list|describe|reset-offsets|delete``: consumer groups, members and lag.

The Kafka work (describe, committed offsets, lag, reset targets) is the ``kafka_admin``
layer's, shared with the web console; this module prints it and asks before it writes.
"""

from __future__ import annotations

from pathlib import Path

import typer

from broker.cli._kafka import (
    COMMAND_CONFIG_HELP,
    BootstrapOpt,
    admin,
    fail,
    kafka_errors,
    out,
    use_command_config,
    wait,
)
from broker.cli.console import start_position
from kafka_admin import GroupBusyError, groups
from sluice.terminal import escape, success, table

groups_app = typer.Typer(
    help="List, describe, reset and delete consumer groups.", no_args_is_help=True
)
GroupArg = typer.Argument(..., help="The consumer group's id.")


@groups_app.callback()
def _client_options(
    command_config: Path | None = typer.Option(None, "--command-config", help=COMMAND_CONFIG_HELP),
) -> None:
    """List, describe, reset and delete consumer groups."""
    use_command_config(command_config)


@groups_app.command("list")
def list_(bootstrap: str = BootstrapOpt) -> None:
    """List consumer groups with their state."""
    client = admin(bootstrap)  # keep a reference: the future dies with its client
    result = wait(client.admin.list_consumer_groups(request_timeout=15), "list groups")
    rows = table("group", "state", "type")
    for listing in sorted(result.valid, key=lambda g: g.group_id):
        state = getattr(listing.state, "name", str(listing.state))
        rows.add_row(
            escape(listing.group_id),
            state,
            "simple" if listing.is_simple_consumer_group else "consumer",
        )
    out.print(rows)


@groups_app.command("describe")
def describe(group: str = GroupArg, bootstrap: str = BootstrapOpt) -> None:
    """Members with their assignments, then committed offset, end offset and lag per partition."""
    client = admin(bootstrap)
    with kafka_errors(f"describe {group}"):
        desc = groups.describe(client, group)
    protocol = desc["protocol"] or "-"
    out.print(f"[bold]{escape(group)}[/bold]  state={desc['state']}  protocol={escape(protocol)}")
    members = table("member", "client", "host", "assigned partitions")
    owner: dict[tuple[str, int], str] = {}
    for m in desc["members"]:
        for a in m["assignment"]:
            owner[(a["topic"], a["partition"])] = m["member_id"]
        members.add_row(
            escape(m["member_id"]),
            escape(m["client_id"]),
            escape(m["host"]),
            escape(", ".join(f"{a['topic']}-{a['partition']}" for a in m["assignment"])),
        )
    if desc["members"]:
        out.print(members)
    committed = [p for p in desc["offsets"] if p["committed"] is not None]
    lag_table = table("topic", "partition", "committed", "end", "lag", "member")
    for p in committed:
        lag_table.add_row(
            escape(p["topic"]),
            str(p["partition"]),
            str(p["committed"]),
            str(p["end_offset"]),
            str(p["lag"]),
            escape(owner.get((p["topic"], p["partition"]), "-")),
        )
    out.print(lag_table if committed else "no committed offsets")


@groups_app.command("reset-offsets")
def reset_offsets(
    group: str = GroupArg,
    topic: str = typer.Option(..., "--topic", "-t", help="The topic whose offsets move."),
    to: str = typer.Option(..., "--to", help="beginning, end, an offset, @<epoch ms> or ISO time."),
    execute: bool = typer.Option(False, "--execute", help="Apply; without it, only show the plan."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Move a group's committed offsets for a topic; the group must have no active members."""
    client = admin(bootstrap)
    with kafka_errors(f"describe {group}"):
        desc = groups.describe(client, group)
    if desc["members"]:
        fail(
            f"group {group} has {len(desc['members'])} active member(s)",
            "stop its consumers first; offsets of an active group would be overwritten by them",
        )
    kind, value = start_position(to)
    if kind == "timestamp":
        target, options = "timestamp", {"timestamp_ms": value}
    elif value == -2:
        target, options = "earliest", {}
    elif value == -1:
        target, options = "latest", {}
    else:  # an offset, committed as given (like kafka-consumer-groups --to-offset)
        target, options = "offset", {"offset": value, "clamp": False}
    with kafka_errors(f"reset offsets of {group}"):
        parts = groups.topic_partitions(client, topic)
        targets = groups.reset_targets(client, parts, target, **options)  # type: ignore[arg-type]
    rows = table("topic", "partition", "new offset")
    for (t, p), off in sorted(targets.items()):
        rows.add_row(escape(t), str(p), str(off))
    out.print(rows)
    if not execute:
        out.print("[yellow]dry run[/yellow]: add --execute to apply")
        return
    with kafka_errors(f"reset offsets of {group}"):
        groups.commit_offsets(client, group, {tp: (off, None, None) for tp, off in targets.items()})
    success(f"reset {len(targets)} partition(s) of {group}")


@groups_app.command("delete")
def delete(
    group: str = GroupArg,
    yes: bool = typer.Option(False, "--yes", "-y", help="Don't ask for confirmation."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Delete a group and its committed offsets; the group must have no active members."""
    if not yes and not typer.confirm(f"delete group {group} and its committed offsets?"):
        raise typer.Exit(1)
    client = admin(bootstrap)
    with kafka_errors(f"delete group {group}"):
        try:
            existed = groups.delete_group(client, group)
        except GroupBusyError:
            fail(
                f"group {group} has active members",
                "stop its consumers first; a group is deleted only when it is empty",
            )
    if not existed:
        fail(f"group {group} not found", "list groups with `sluice groups list`")
    success(f"deleted group {group}")
