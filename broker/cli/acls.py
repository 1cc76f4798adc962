"""``sluice acls add|list|remove``: Kafka's ACLs, the way ``kafka-acls.sh`` manages them.

Talks CreateAcls/DescribeAcls/DeleteAcls through confluent-kafka's AdminClient, so it works
against Sluice's broker and any Kafka cluster with an authorizer. The options keep
``kafka-acls.sh``'s names (``--allow-principal``, ``--operation``, ``--topic``,
``--resource-pattern-type``, the ``--producer``/``--consumer`` shortcuts) so its examples
translate word for word. ``--command-config`` names a properties file of client settings
(``security.protocol``, ``sasl.*``, ``ssl.*``) for clusters that need authentication, as
kafka-acls.sh's option of the same name does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from broker.cli._kafka import BootstrapOpt, client_config, fail, kafka_errors, out, wait

acls_app = typer.Typer(help="Add, list and remove ACLs (as kafka-acls.sh).", no_args_is_help=True)

CommandConfigOpt = typer.Option(
    None, "--command-config", help="Client settings file (security.protocol, sasl.*, ssl.*)."
)
TopicOpt = typer.Option([], "--topic", help="Topic (repeatable; * for all).")
GroupOpt = typer.Option([], "--group", help="Consumer group (repeatable; * for all).")
TxnOpt = typer.Option([], "--transactional-id", help="Transactional id (repeatable).")
ClusterOpt = typer.Option(False, "--cluster", help="The cluster resource.")
PatternOpt = typer.Option(
    None, "--resource-pattern-type",
    help="literal or prefixed (add); also any or match (list/remove).",
)  # fmt: skip
OperationOpt = typer.Option(
    [], "--operation", help="Read, Write, Create, Delete, Alter, Describe, ClusterAction, "
    "DescribeConfigs, AlterConfigs, IdempotentWrite, All (repeatable).",
)  # fmt: skip


def _admin(bootstrap: str, command_config: Path | None) -> Any:
    from confluent_kafka.admin import AdminClient

    extra: dict[str, str] = {}
    if command_config is not None:
        from broker.properties import read_properties

        try:
            extra = read_properties(command_config)
        except OSError as exc:
            fail(f"cannot read {command_config}: {exc.strerror}")
    return AdminClient(client_config(bootstrap, **extra))


def _enum(kind: Any, text: str, what: str) -> Any:
    key = text.replace("-", "").replace("_", "").upper()
    for member in kind:
        if member.name.replace("_", "") == key:
            return member
    choices = ", ".join(m.name.lower() for m in kind if m.name not in ("UNKNOWN",))
    fail(f"unknown {what} {text!r}", f"use one of: {choices}")


def _resources(
    topic: list[str], group: list[str], txn: list[str], cluster: bool
) -> list[tuple[Any, str]]:
    from confluent_kafka.admin import ResourceType

    out_: list[tuple[Any, str]] = [(ResourceType.TOPIC, t) for t in topic]
    out_ += [(ResourceType.GROUP, g) for g in group]
    out_ += [(ResourceType.TRANSACTIONAL_ID, t) for t in txn]
    if cluster:
        out_.append((ResourceType.BROKER, "kafka-cluster"))
    return out_


@acls_app.command("add")
def add(
    allow_principal: list[str] = typer.Option([], "--allow-principal", help="e.g. User:alice"),
    deny_principal: list[str] = typer.Option([], "--deny-principal", help="e.g. User:mallory"),
    host: str = typer.Option("*", "--host", help="Client host the ACL applies to (* = any)."),
    operation: list[str] = OperationOpt,
    topic: list[str] = TopicOpt,
    group: list[str] = GroupOpt,
    transactional_id: list[str] = TxnOpt,
    cluster: bool = ClusterOpt,
    resource_pattern_type: str | None = PatternOpt,
    producer: bool = typer.Option(False, "--producer", help="Write, Describe, Create on topics."),
    consumer: bool = typer.Option(
        False, "--consumer", help="Read, Describe on topics; Read on groups."
    ),
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """Add ALLOW/DENY ACLs for principals on the given resources."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    principals = [(p, AclPermissionType.ALLOW) for p in allow_principal]
    principals += [(p, AclPermissionType.DENY) for p in deny_principal]
    if not principals:
        fail("no principal", "pass --allow-principal User:NAME or --deny-principal User:NAME")
    pattern = _enum(ResourcePatternType, resource_pattern_type or "literal", "pattern type")
    wanted: list[tuple[Any, str, Any]] = []
    if producer or consumer:
        for t in topic:
            ops = ["write", "describe", "create"] if producer else []
            ops += ["read", "describe"] if consumer else []
            wanted += [(ResourceType.TOPIC, t, _enum(AclOperation, op, "operation"))
                       for op in dict.fromkeys(ops)]  # fmt: skip
        if consumer:
            wanted += [(ResourceType.GROUP, g, AclOperation.READ) for g in group]
    else:
        if not operation:
            fail("no operation", "pass --operation (e.g. Read), or --producer/--consumer")
        ops = [_enum(AclOperation, op, "operation") for op in operation]
        for rtype, name in _resources(topic, group, transactional_id, cluster):
            wanted += [(rtype, name, op) for op in ops]
    if not wanted:
        fail("no resource", "pass --topic, --group, --transactional-id or --cluster")
    bindings = [
        AclBinding(rtype, name, pattern, principal, host, op, permission)
        for principal, permission in principals
        for rtype, name, op in wanted
    ]
    client = _admin(bootstrap, command_config)
    with kafka_errors("add ACLs"):
        for binding, future in client.create_acls(bindings).items():
            wait(future, f"add {binding}")
    out.print(f"added {len(bindings)} ACL(s)")


def _filter(
    principal: str | None, host: str | None, operation: str | None, rtype: Any, name: str | None,
    pattern: str | None, permission: str | None,
) -> Any:  # fmt: skip
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
    )

    make: Any = AclBindingFilter  # its stubs say str where the API takes None (= any)
    return make(
        rtype, name,
        _enum(ResourcePatternType, pattern or ("any" if name is None else "literal"), "pattern"),
        principal, host,
        _enum(AclOperation, operation or "any", "operation"),
        _enum(AclPermissionType, permission or "any", "permission"),
    )  # fmt: skip


def _filters(
    topic: list[str], group: list[str], txn: list[str], cluster: bool, **fields: Any
) -> list[Any]:
    from confluent_kafka.admin import ResourceType

    resources: list[tuple[Any, str | None]] = [*_resources(topic, group, txn, cluster)]
    resources = resources or [(ResourceType.ANY, None)]
    return [_filter(rtype=rtype, name=name, **fields) for rtype, name in resources]


@acls_app.command("list")
def list_(
    principal: str | None = typer.Option(None, "--principal", help="Only this principal."),
    topic: list[str] = TopicOpt,
    group: list[str] = GroupOpt,
    transactional_id: list[str] = TxnOpt,
    cluster: bool = ClusterOpt,
    resource_pattern_type: str | None = PatternOpt,
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """List ACLs (all of them, or those of the given resources/principal)."""
    client = _admin(bootstrap, command_config)
    table = Table("resource", "pattern", "principal", "host", "operation", "permission", box=None)
    selectors = _filters(
        topic, group, transactional_id, cluster, principal=principal, host=None, operation=None,
        pattern=resource_pattern_type, permission=None,
    )  # fmt: skip
    with kafka_errors("list ACLs"):
        rows = set()
        for selector in selectors:
            for b in wait(client.describe_acls(selector), "list ACLs"):
                rows.add((
                    f"{_kind(b.restype)}:{b.name}", b.resource_pattern_type.name, b.principal,
                    b.host, b.operation.name, b.permission_type.name,
                ))  # fmt: skip
    for row in sorted(rows):
        table.add_row(*row)
    out.print(table)


@acls_app.command("remove")
def remove(
    allow_principal: str | None = typer.Option(
        None, "--allow-principal", help="Only ALLOW ACLs of this principal (e.g. User:alice)."
    ),
    deny_principal: str | None = typer.Option(
        None, "--deny-principal", help="Only DENY ACLs of this principal (e.g. User:mallory)."
    ),
    host: str | None = typer.Option(None, "--host", help="Only ACLs for this host."),
    operation: str | None = typer.Option(None, "--operation", help="Only this operation."),
    topic: list[str] = TopicOpt,
    group: list[str] = GroupOpt,
    transactional_id: list[str] = TxnOpt,
    cluster: bool = ClusterOpt,
    resource_pattern_type: str | None = PatternOpt,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """Remove the ACLs the options select (unset options match anything)."""
    if not (topic or group or transactional_id or cluster) and not yes:
        fail("no resource given: this would remove ACLs of every resource",
             "name --topic/--group/--transactional-id/--cluster, or pass --yes")  # fmt: skip
    permission = "allow" if allow_principal else "deny" if deny_principal else None
    selectors = _filters(topic, group, transactional_id, cluster,
                         principal=allow_principal or deny_principal, host=host,
                         operation=operation, pattern=resource_pattern_type,
                         permission=permission)  # fmt: skip
    client = _admin(bootstrap, command_config)
    removed = 0
    with kafka_errors("remove ACLs"):
        for future in client.delete_acls(selectors).values():
            removed += len(wait(future, "remove ACLs"))
    out.print(f"removed {removed} ACL(s)")


def _kind(restype: Any) -> str:
    return "Cluster" if restype.name == "BROKER" else restype.name.title().replace("_", "")
