"""``sluice quotas describe|alter``: client quotas, as ``kafka-configs.sh --entity-type users/
clients`` manages them.

Speaks DescribeClientQuotas/AlterClientQuotas (KIP-546) through kafka-python's admin client
(confluent-kafka has no quota API), so it works against Sluice's broker and any Kafka cluster.
Entities: ``--user NAME`` / ``--default-user`` and ``--client-id NAME`` /
``--default-client-id``, alone or together. Configs: ``producer_byte_rate``,
``consumer_byte_rate`` (bytes/s), ``request_percentage``. ``--command-config`` names a client
settings file (``security.protocol``, ``sasl.*``, ``ssl.*`` in librdkafka's names).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from broker.cli._kafka import BootstrapOpt, fail, out

quotas_app = typer.Typer(
    help="Describe and alter client quotas (as kafka-configs.sh).", no_args_is_help=True
)
UserOpt = typer.Option(None, "--user", help="User principal name (e.g. alice).")
DefaultUserOpt = typer.Option(False, "--default-user", help="The default user entity.")
ClientOpt = typer.Option(None, "--client-id", help="Client id.")
DefaultClientOpt = typer.Option(False, "--default-client-id", help="The default client id.")
CommandConfigOpt = typer.Option(
    None, "--command-config", help="Client settings file (security.protocol, sasl.*, ssl.*)."
)

# librdkafka/Java client setting -> kafka-python keyword
_CLIENT_KEYS = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
}


@contextmanager
def _admin(bootstrap: str, command_config: Path | None) -> Iterator[Any]:
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaError

    extra: dict[str, str] = {}
    if command_config is not None:
        from broker.properties import read_properties

        try:
            settings = read_properties(command_config)
        except OSError as exc:
            fail(f"cannot read {command_config}: {exc.strerror}")
        unknown = sorted(set(settings) - set(_CLIENT_KEYS))
        if unknown:
            fail(f"{command_config}: unsupported settings {', '.join(unknown)}",
                 f"use {', '.join(_CLIENT_KEYS)}")  # fmt: skip
        extra = {_CLIENT_KEYS[k]: v for k, v in settings.items()}
    try:
        client = KafkaAdminClient(
            bootstrap_servers=bootstrap.split(","), request_timeout_ms=15000, **extra
        )
    except KafkaError as exc:
        fail(f"cannot reach a broker at {bootstrap}: {exc}",
             "start one with `sluice broker` or pass --bootstrap HOST:PORT")  # fmt: skip
    try:
        yield client
    except KafkaError as exc:
        fail(f"{type(exc).__name__}: {exc}")
    finally:
        client.close()


def _send(admin: Any, request: Any) -> Any:
    return admin._manager.run(admin._manager.send, request)


def _entity(
    user: str | None, default_user: bool, client_id: str | None, default_client: bool
) -> list[tuple[str, str | None]]:
    if user is not None and default_user:
        fail("--user and --default-user name different entities; pass one")
    if client_id is not None and default_client:
        fail("--client-id and --default-client-id name different entities; pass one")
    parts: list[tuple[str, str | None]] = []
    if user is not None or default_user:
        parts.append(("user", user))
    if client_id is not None or default_client:
        parts.append(("client-id", client_id))
    return parts


def _name(name: str | None) -> str:
    return "<default>" if name is None else name


@quotas_app.command("describe")
def describe(
    user: str | None = UserOpt,
    default_user: bool = DefaultUserOpt,
    client_id: str | None = ClientOpt,
    default_client_id: bool = DefaultClientOpt,
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """List quotas: all of them, or those of entities with the given user/client id."""
    from kafka.protocol.admin.client_quotas import DescribeClientQuotasRequest as Request

    parts = _entity(user, default_user, client_id, default_client_id)
    components = [
        Request.ComponentData(entity_type=etype, match_type=1 if name is None else 0, match=name)
        for etype, name in parts
    ]
    with _admin(bootstrap, command_config) as admin:
        answer = _send(admin, Request(components=components, strict=False))
    if answer.error_code:
        fail(f"describe quotas: {answer.error_message or answer.error_code}")
    table = Table("user", "client id", "quota", "value", box=None)
    for entry in answer.entries or ():
        names = {e.entity_type: _name(e.entity_name) for e in entry.entity}
        for value in entry.values:
            table.add_row(names.get("user", ""), names.get("client-id", ""), value.key,
                          f"{value.value:.15g}")  # fmt: skip
    out.print(table)


@quotas_app.command("alter")
def alter(
    user: str | None = UserOpt,
    default_user: bool = DefaultUserOpt,
    client_id: str | None = ClientOpt,
    default_client_id: bool = DefaultClientOpt,
    add_config: str | None = typer.Option(
        None, "--add-config", help="key=value[,key=value]: producer_byte_rate=1048576 ..."
    ),
    delete_config: str | None = typer.Option(
        None, "--delete-config", help="key[,key]: quotas to remove from the entity."
    ),
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """Set (--add-config) or remove (--delete-config) quotas of one entity."""
    from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest as Request

    parts = _entity(user, default_user, client_id, default_client_id)
    if not parts:
        fail("no entity", "pass --user/--default-user and/or --client-id/--default-client-id")
    ops = []
    Op = Request.EntryData.OpData
    for item in (add_config or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        try:
            ops.append(Op(key=key.strip(), value=float(value), remove=False))
        except ValueError:
            fail(f"--add-config needs key=number, got {item!r}")
        if not sep:
            fail(f"--add-config needs key=number, got {item!r}")
    for key in (delete_config or "").split(","):
        if key.strip():
            ops.append(Op(key=key.strip(), value=0.0, remove=True))
    if not ops:
        fail("nothing to change", "pass --add-config and/or --delete-config")
    entity = [Request.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in parts]
    request = Request(entries=[Request.EntryData(entity=entity, ops=ops)], validate_only=False)
    with _admin(bootstrap, command_config) as admin:
        answer = _send(admin, request)
    for entry in answer.entries:
        if entry.error_code:
            fail(f"alter quotas: {entry.error_message or entry.error_code}")
    what = ", ".join(f"{t} {_name(n)}" for t, n in parts)
    out.print(f"updated quotas of {what}")
