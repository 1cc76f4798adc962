"""``sluice topics create|list|describe|alter|delete``, over the ``kafka_admin`` layer."""

from __future__ import annotations

from pathlib import Path

import typer
from confluent_kafka.admin import NewTopic

from broker.cli._kafka import (
    COMMAND_CONFIG_HELP,
    BootstrapOpt,
    admin,
    fail,
    kafka_errors,
    out,
    parse_configs,
    use_command_config,
    wait,
)
from sluice.terminal import escape, success, table

topics_app = typer.Typer(
    help="Create, list, describe, alter and delete topics.", no_args_is_help=True
)
TopicArg = typer.Argument(..., help="The topic's name.")


@topics_app.callback()
def _client_options(
    command_config: Path | None = typer.Option(None, "--command-config", help=COMMAND_CONFIG_HELP),
) -> None:
    """Create, list, describe, alter and delete topics."""
    use_command_config(command_config)


@topics_app.command("create")
def create(
    name: str = TopicArg,
    partitions: int = typer.Option(1, "--partitions", "-p", min=1, help="Number of partitions."),
    replication_factor: int = typer.Option(
        -1, "--replication-factor", "-r", help="Copies of each partition (-1: broker default)."
    ),
    config: list[str] = typer.Option(
        [], "--config", "-c", help="Topic config name=value (retention.ms=60000); repeatable."
    ),
    if_not_exists: bool = typer.Option(
        False, "--if-not-exists", help="Succeed without change when the topic exists."
    ),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Create a topic."""
    client = admin(bootstrap)
    topic = NewTopic(name, partitions, replication_factor, config=parse_configs(config))
    future = client.admin.create_topics([topic], request_timeout=15)[name]
    try:
        future.result(timeout=15)
    except Exception as exc:
        if if_not_exists and "TOPIC_ALREADY_EXISTS" in str(exc):
            success(f"topic {name} already exists")
            return
        wait(future, f"create topic {name}")
    success(f"created topic {name} with {partitions} partition(s)")


@topics_app.command("list")
def list_(
    internal: bool = typer.Option(False, "--internal", help="Include internal topics (__*)."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """List topics with partition counts."""
    metadata = admin(bootstrap).metadata()
    rows = table("topic", "partitions")
    for name in sorted(metadata.topics):
        if name.startswith("__") and not internal:
            continue
        rows.add_row(escape(name), str(len(metadata.topics[name].partitions)))
    out.print(rows)


@topics_app.command("describe")
def describe(
    name: str = TopicArg,
    all_configs: bool = typer.Option(
        False, "--all", help="List every config, defaults included (default: only overrides)."
    ),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Show partitions (leader, replicas, ISR, offsets) and configs with their sources.

    A config's source is Kafka's name for where its value comes from: DYNAMIC_TOPIC_CONFIG (set
    on the topic), STATIC_BROKER_CONFIG (the broker's server.properties), DYNAMIC_BROKER_CONFIG,
    DEFAULT_CONFIG (the built-in default), as ``kafka-configs --describe`` prints them.
    """
    client = admin(bootstrap)
    topic = client.metadata(name).topics.get(name)
    if topic is None or topic.error is not None:
        fail(f"topic {name} not found", "list topics with `sluice topics list`")
    parts = sorted(topic.partitions)
    with kafka_errors("list offsets"):
        marks = client.watermarks((name, p) for p in parts)
    rows = table("partition", "leader", "replicas", "isr", "start offset", "end offset")
    for p in parts:
        info = topic.partitions[p]
        start, end = marks[(name, p)]
        rows.add_row(
            str(p),
            str(info.leader),
            ",".join(map(str, info.replicas)),
            ",".join(map(str, info.isrs)),
            str(start),
            str(end),
        )
    out.print(f"[bold]{escape(name)}[/bold]  partitions={len(parts)}")
    out.print(rows)
    with kafka_errors("describe configs"):
        configs = client.topic_configs([name]).get(name, {})
    shown = {k: e for k, e in configs.items() if all_configs or not e["is_default"]}
    if not shown:
        out.print("no config overrides; --all lists every config with its source")
        return
    config_rows = table("config", "value", "source")
    for key, entry in shown.items():
        value = "(sensitive)" if entry["sensitive"] else str(entry["value"])
        config_rows.add_row(escape(key), escape(value), entry["source"])
    out.print(config_rows)


@topics_app.command("alter")
def alter(
    name: str = TopicArg,
    config: list[str] = typer.Option(
        [], "--config", "-c", help="Set a config name=value; repeatable."
    ),
    delete_config: list[str] = typer.Option(
        [], "--delete-config", help="Reset a config to its default; repeatable."
    ),
    partitions: int | None = typer.Option(
        None, "--partitions", "-p", help="New total partition count (can only grow)."
    ),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Change a topic's configs (incrementally) or grow its partition count."""
    if not config and not delete_config and partitions is None:
        fail("nothing to change", "pass --config k=v, --delete-config k or --partitions N")
    client = admin(bootstrap)
    to_set = parse_configs(config)
    if to_set or delete_config:
        with kafka_errors(f"alter topic {name}"):
            client.alter_topic_configs(name, to_set, delete_config)
        success(f"updated {len(to_set) + len(delete_config)} config(s) of {name}")
    if partitions is not None:
        with kafka_errors(f"grow {name} to {partitions} partitions"):
            client.create_partitions(name, partitions)
        success(f"{name} now has {partitions} partitions")


@topics_app.command("delete")
def delete(
    name: str = TopicArg,
    yes: bool = typer.Option(False, "--yes", "-y", help="Don't ask for confirmation."),
    bootstrap: str = BootstrapOpt,
) -> None:
    """Delete a topic and all its data."""
    if not yes and not typer.confirm(f"delete topic {name} and all its data?"):
        raise typer.Exit(1)
    client = admin(bootstrap)
    with kafka_errors(f"delete topic {name}"):
        client.delete_topic(name)
    success(f"deleted topic {name}")
