"""``sluice users create|describe|delete``: SCRAM users, as ``kafka-configs --entity-type users``.

Through confluent-kafka's AlterUserScramCredentials/DescribeUserScramCredentials (KIP-554), so
they work against any Kafka 2.7+ cluster as well as Sluice's broker. The password is read from
a prompt (or ``--password-file``/``$SLUICE_USER_PASSWORD``), never from the command line where
``ps`` would show it, and is never printed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from broker.cli._kafka import (
    BootstrapOpt,
    CommandConfigOpt,
    admin,
    fail,
    kafka_errors,
    out,
    use_command_config,
    wait,
)
from sluice.terminal import escape, success, table

users_app = typer.Typer(
    help="Create, describe and delete SCRAM users (SASL/SCRAM-SHA-256/512).",
    no_args_is_help=True,
)
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
UserArg = typer.Argument(..., help="The user name (the principal is User:<name>).")
MechanismOpt = typer.Option(
    [], "--mechanism", "-m", help="SCRAM-SHA-256 and/or SCRAM-SHA-512 (default: both)."
)


def _mechanisms(given: list[str]) -> list[str]:
    chosen = [m.upper() for m in given] or list(MECHANISMS)
    unknown = [m for m in chosen if m not in MECHANISMS]
    if unknown:
        fail(f"unknown mechanism {', '.join(unknown)}", f"use {' or '.join(MECHANISMS)}")
    return chosen


def _password(password_file: Path | None) -> str:
    if password_file is not None:
        try:
            return password_file.read_text().rstrip("\n")
        except OSError as exc:
            fail(f"cannot read {password_file}: {exc.strerror}")
    env = os.environ.get("SLUICE_USER_PASSWORD")
    if env:
        return env
    return str(typer.prompt("Password", hide_input=True, confirmation_prompt=True))


@users_app.command("create")
def create(
    user: str = UserArg,
    mechanism: list[str] = MechanismOpt,
    iterations: int = typer.Option(8192, help="PBKDF2 iterations (4096-16384)."),
    password_file: Path | None = typer.Option(
        None, help="Read the password from this file (else $SLUICE_USER_PASSWORD, else a prompt)."
    ),
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """Create a SCRAM user, or set a new password for an existing one."""
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    use_command_config(command_config)
    chosen = _mechanisms(mechanism)
    password = _password(password_file).encode()
    client = admin(bootstrap)
    upserts: list[Any] = [
        UserScramCredentialUpsertion(
            user, ScramCredentialInfo(getattr(ScramMechanism, m.replace("-", "_")), iterations),
            password,
        )
        for m in chosen
    ]  # fmt: skip
    with kafka_errors(f"create user {user}"):
        for future in client.admin.alter_user_scram_credentials(upserts).values():
            wait(future, f"create user {user}")
    success(f"user {escape(user)}: {', '.join(chosen)} credentials set")


@users_app.command("describe")
def describe(
    users: list[str] = typer.Argument(None, help="User names (default: all)."),
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """List users and their SCRAM mechanisms and iterations (never salts or keys)."""
    use_command_config(command_config)
    client = admin(bootstrap)
    with kafka_errors("describe users"):
        result = client.admin.describe_user_scram_credentials(users or None)
        if isinstance(result, dict):
            descriptions = {u: wait(f, f"describe {u}") for u, f in result.items()}
        else:
            descriptions = wait(result, "describe users")
    rows = table("user", "mechanism", "iterations")
    for name in sorted(descriptions):
        for info in descriptions[name].scram_credential_infos:
            rows.add_row(escape(name), info.mechanism.name.replace("_", "-"), str(info.iterations))
    out.print(rows if descriptions else "no SCRAM users")


@users_app.command("delete")
def delete(
    user: str = UserArg,
    mechanism: list[str] = MechanismOpt,
    bootstrap: str = BootstrapOpt,
    command_config: Path | None = CommandConfigOpt,
) -> None:
    """Delete a user's SCRAM credentials (all mechanisms unless --mechanism)."""
    from confluent_kafka.admin import ScramMechanism, UserScramCredentialDeletion

    use_command_config(command_config)
    client = admin(bootstrap)
    chosen = mechanism and _mechanisms(mechanism)
    if not chosen:
        with kafka_errors(f"describe {user}"):
            found: Any = client.admin.describe_user_scram_credentials([user])
            desc = wait(found[user], f"describe {user}")
        chosen = [i.mechanism.name.replace("_", "-") for i in desc.scram_credential_infos]
    deletions: list[Any] = [
        UserScramCredentialDeletion(user, getattr(ScramMechanism, m.replace("-", "_")))
        for m in chosen
    ]
    with kafka_errors(f"delete user {user}"):
        for future in client.admin.alter_user_scram_credentials(deletions).values():
            wait(future, f"delete user {user}")
    success(f"user {escape(user)}: {', '.join(chosen)} credentials deleted")
