"""``sluice topics create|list|describe|alter|delete``."""

from __future__ import annotations

import typer
from confluent_kafka import TopicPartition
from confluent_kafka.admin import (
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourceType,
)
from rich.table import Table

from broker.cli._kafka import (
    BOOTSTRAP_HELP,
    DEFAULT_BOOTSTRAP,
    admin,
    fail,
    out,
    parse_configs,
    wait,
)

topics_app = typer.Typer(
    help="Create, list, describe, alter and delete topics.", no_args_is_help=True
)

BootstrapOpt = typer.Option(DEFAULT_BOOTSTRAP, "--bootstrap", "-b", help=BOOTSTRAP_HELP)


@topics_app.command("create")
def create(
    name: str,
    partitions: int = typer.Option(1, "--partitions", "-p", min=1),
    replication_factor: int = typer.Option(-1, "--replication-factor", "-r"),
    config: list[str] = typer.Option([], "--config", "-c", help="name=value, repeatable."),
    if_not_exists: bool = typer.Option(False, "--if-not-exists"),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Create a topic."""
    client = admin(bootstrap)
    topic = NewTopic(name, partitions, replication_factor, config=parse_configs(config))
    future = client.create_topics([topic], request_timeout=15)[name]
    try:
        future.result(timeout=15)
    except Exception as exc:
        if if_not_exists and "TOPIC_ALREADY_EXISTS" in str(exc):
            out.print(f"topic {name} already exists")
            return
        wait(future, f"create topic {name}")
    out.print(f"created topic [bold]{name}[/bold] with {partitions} partition(s)")


@topics_app.command("list")
def list_(
    internal: bool = typer.Option(False, "--internal", help="Include internal topics."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """List topics with partition counts."""
    metadata = admin(bootstrap).list_topics(timeout=15)
    table = Table("topic", "partitions", box=None)
    for name in sorted(metadata.topics):
        if name.startswith("__") and not internal:
            continue
        table.add_row(name, str(len(metadata.topics[name].partitions)))
    out.print(table)


@topics_app.command("describe")
def describe(name: str, bootstrap: str = BootstrapOpt) -> None:
    """Show partitions (leader, start/end offsets) and non-default configs of a topic."""
    client = admin(bootstrap)
    metadata = client.list_topics(topic=name, timeout=15)
    topic = metadata.topics.get(name)
    if topic is None or topic.error is not None:
        fail(f"topic {name} not found", "list topics with `sluice topics list`")
    parts = sorted(topic.partitions)
    tps = [TopicPartition(name, p) for p in parts]
    earliest = client.list_offsets({tp: OffsetSpec.earliest() for tp in tps})
    latest = client.list_offsets({tp: OffsetSpec.latest() for tp in tps})
    table = Table("partition", "leader", "replicas", "start offset", "end offset", box=None)
    for tp, p in zip(tps, parts, strict=True):
        info = topic.partitions[p]
        start = wait(earliest[tp], "list offsets").offset
        end = wait(latest[tp], "list offsets").offset
        table.add_row(
            str(p), str(info.leader), ",".join(map(str, info.replicas)), str(start), str(end)
        )
    out.print(f"[bold]{name}[/bold]  partitions={len(parts)}")
    out.print(table)
    resource = ConfigResource(ResourceType.TOPIC, name)
    configs = wait(client.describe_configs([resource])[resource], "describe configs")
    ctable = Table("config", "value", "source", box=None)
    for entry in sorted(configs.values(), key=lambda e: e.name):
        if not entry.is_default:
            ctable.add_row(entry.name, str(entry.value), str(entry.source))
    if ctable.row_count:
        out.print(ctable)


@topics_app.command("alter")
def alter(
    name: str,
    config: list[str] = typer.Option([], "--config", "-c", help="Set name=value, repeatable."),
    delete_config: list[str] = typer.Option([], "--delete-config", help="Reset to default."),
    partitions: int | None = typer.Option(None, "--partitions", "-p", help="New total count."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Change a topic's configs (incrementally) or grow its partition count."""
    if not config and not delete_config and partitions is None:
        fail("nothing to change", "pass --config k=v, --delete-config k or --partitions N")
    client = admin(bootstrap)
    entries = [
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
        for k, v in parse_configs(config).items()
    ] + [
        ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in delete_config
    ]
    if entries:
        resource = ConfigResource(ResourceType.TOPIC, name, incremental_configs=entries)
        wait(client.incremental_alter_configs([resource])[resource], f"alter topic {name}")
        out.print(f"updated {len(entries)} config(s) of {name}")
    if partitions is not None:
        future = client.create_partitions([NewPartitions(name, partitions)])[name]
        wait(future, f"grow {name} to {partitions} partitions")
        out.print(f"{name} now has {partitions} partitions")


@topics_app.command("delete")
def delete(
    name: str,
    yes: bool = typer.Option(False, "--yes", "-y", help="Don't ask for confirmation."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Delete a topic and all its data."""
    if not yes and not typer.confirm(f"delete topic {name} and all its data?"):
        raise typer.Exit(1)
    client = admin(bootstrap)
    wait(client.delete_topics([name], request_timeout=15)[name], f"delete topic {name}")
    out.print(f"deleted topic {name}")
