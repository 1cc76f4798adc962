"""``sluice schemas`` (a registry client) and ``sluice schema-registry`` (serve one).

``sluice schemas`` talks to any Confluent-compatible registry over its REST API: list
subjects and versions, print a schema, register one from a file, test compatibility, read
and set compatibility levels. Failures print one red line with Confluent's error code and a
hint, never a traceback.

``sluice schema-registry --bootstrap host:port`` runs only the registry against any Kafka
cluster, as Confluent's service does (``sluice up`` already serves one on port 8081).
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import typer

from schema_registry.client import RegistryClient, RegistryClientError
from sluice.terminal import err, escape, fail, out, table

DEFAULT_URL = "http://127.0.0.1:8081"
schemas_app = typer.Typer(
    help="Subjects, versions, compatibility of a schema registry (REST client).",
    no_args_is_help=True,
)
SubjectArg = typer.Argument(..., help="The subject (usually <topic>-value or <topic>-key).")

UrlOpt = typer.Option(
    DEFAULT_URL, "--url", envvar="SLUICE_SCHEMA_REGISTRY_URL",
    help="The registry; env SLUICE_SCHEMA_REGISTRY_URL.",
)  # fmt: skip
TokenOpt = typer.Option(None, "--token", envvar="SLUICE_REST_TOKEN", help="Bearer token.")
UserOpt = typer.Option(None, "--user", envvar="SLUICE_REST_BASIC", help="USER:PASSWORD.")
TypeOpt = typer.Option(
    None, "--type", help="AVRO, PROTOBUF or JSON (default: from the file extension)."
)


def _fail(message: str, hint: str | None = None) -> NoReturn:
    fail(message, hint)


@contextmanager
def _client(url: str, token: str | None, user: str | None) -> Iterator[RegistryClient]:
    if not token and not user:  # the token a local `sluice up` generated (hub/rest/token_file)
        from hub.rest.token_file import TokenFileError, local_token

        try:
            token = local_token(url, os.environ.get("SLUICE_REST_TOKEN_FILE"))
        except TokenFileError as exc:
            _fail(str(exc))
    try:
        yield RegistryClient(url, basic=user, token=token)
    except RegistryClientError as exc:
        hint = None
        if exc.status == 0:
            hint = "start one with `sluice up`, or point --url at a registry"
        elif exc.status == 401:
            hint = "pass --token or --user (the hub's rest.auth.token / rest.auth.basic)"
        _fail(f"{exc.message} (error code {exc.error_code})" if exc.status else exc.message, hint)


@schemas_app.command("list")
def list_subjects(
    url: str = UrlOpt, token: str | None = TokenOpt, user: str | None = UserOpt,
    deleted: bool = typer.Option(False, help="Include soft-deleted subjects."),
) -> None:  # fmt: skip
    """Subjects with their latest version, id, type and compatibility level."""
    with _client(url, token, user) as client:
        rows = table("subject", "versions", "latest id", "type", "compatibility")
        for subject in client.subjects(deleted):
            versions = client.versions(subject) if not deleted else []
            latest = client.version(subject, "latest", deleted=deleted or None)
            rows.add_row(
                escape(subject), ", ".join(map(str, versions)) or str(latest.version),
                str(latest.id), latest.schema_type, client.compatibility(subject),
            )  # fmt: skip
        out.print(rows)


@schemas_app.command()
def versions(
    subject: str = SubjectArg,
    url: str = UrlOpt,
    token: str | None = TokenOpt,
    user: str | None = UserOpt,
) -> None:
    """The versions of a subject."""
    with _client(url, token, user) as client:
        for version in client.versions(subject):
            out.print(version)


@schemas_app.command()
def get(
    subject: str = SubjectArg,
    version: str = typer.Argument("latest", help="A version number or 'latest'."),
    url: str = UrlOpt, token: str | None = TokenOpt, user: str | None = UserOpt,
) -> None:  # fmt: skip
    """Print one version's schema (JSON pretty-printed)."""
    with _client(url, token, user) as client:
        found = client.version(subject, version)
        about = f"{subject} v{found.version}, id {found.id}, {found.schema_type}"
        err.print(f"[dim]{escape(about)}[/dim]")
        try:
            out.print_json(found.schema)
        except (ValueError, TypeError):
            out.print(found.schema, markup=False)


@schemas_app.command()
def register(
    subject: str = SubjectArg,
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="The schema file."),
    schema_type: str | None = TypeOpt,
    url: str = UrlOpt, token: str | None = TokenOpt, user: str | None = UserOpt,
) -> None:  # fmt: skip
    """Register the schema in FILE under SUBJECT (prints its id)."""
    kind = schema_type or _type_of(file)
    with _client(url, token, user) as client:
        schema_id = client.register(subject, file.read_text(), kind.upper())
        out.print(f"registered {escape(subject)}: id {schema_id}")


@schemas_app.command()
def check(
    subject: str = SubjectArg,
    file: Path = typer.Argument(
        ..., exists=True, dir_okay=False, help="The schema to check (.avsc, .proto, .json)."
    ),
    version: str = typer.Option("latest", help="Version to check against."),
    schema_type: str | None = TypeOpt,
    url: str = UrlOpt, token: str | None = TokenOpt, user: str | None = UserOpt,
) -> None:  # fmt: skip
    """Is the schema in FILE compatible with SUBJECT's VERSION? Exit code 1 when not."""
    kind = schema_type or _type_of(file)
    with _client(url, token, user) as client:
        ok, messages = client.check(subject, file.read_text(), kind.upper(), version)
    if ok:
        out.print("[green]compatible[/green]")
        return
    out.print("[red]incompatible[/red]")
    for message in messages:
        out.print(f"  {escape(message)}")
    raise typer.Exit(1)


@schemas_app.command()
def config(
    subject: str | None = typer.Argument(None, help="A subject; omit for the global level."),
    set_level: str | None = typer.Option(None, "--set", help="New compatibility level."),
    url: str = UrlOpt, token: str | None = TokenOpt, user: str | None = UserOpt,
) -> None:  # fmt: skip
    """Show (or --set) a compatibility level."""
    with _client(url, token, user) as client:
        if set_level:
            out.print(client.set_compatibility(set_level.upper(), subject))
        else:
            out.print(client.compatibility(subject))


@schemas_app.command()
def delete(
    subject: str = SubjectArg,
    permanent: bool = typer.Option(False, help="Hard delete (after a soft delete)."),
    url: str = UrlOpt, token: str | None = TokenOpt, user: str | None = UserOpt,
) -> None:  # fmt: skip
    """Delete a subject (soft, or --permanent after a soft delete)."""
    with _client(url, token, user) as client:
        out.print(json.dumps(client.delete_subject(subject, permanent)), markup=False)


def _type_of(file: Path) -> str:
    suffix = file.suffix.lower()
    if suffix == ".proto":
        return "PROTOBUF"
    if suffix in (".avsc", ".avro"):
        return "AVRO"
    if suffix == ".json":
        text = file.read_text()
        try:
            node = json.loads(text)
        except ValueError:
            return "AVRO"
        looks_avro = isinstance(node, dict) and node.get("type") in ("record", "enum", "fixed")
        return "AVRO" if looks_avro else "JSON"
    return "AVRO"


def register_commands(app: typer.Typer) -> None:
    app.add_typer(schemas_app, name="schemas")

    @app.command("schema-registry")
    def serve(
        bootstrap: str = typer.Option(..., help="HOST:PORT of any Kafka-compatible cluster."),
        port: int = typer.Option(8081, help="Port to listen on."),
        host: str = typer.Option("127.0.0.1", help="Address to listen on."),
        topic: str = typer.Option("_schemas", help="The compacted topic holding the schemas."),
        config: Path | None = typer.Option(
            None, help="Worker-style settings (.properties or .json): rest.auth.* credentials."
        ),
        log_level: str | None = typer.Option(None, help="DEBUG, INFO, WARNING..."),
    ) -> None:
        """Run only the schema registry against a Kafka cluster (Ctrl-C stops it)."""
        from hub.runtime.config import WorkerConfig
        from schema_registry.server import RegistryServer
        from sluice.logs import setup_logging

        setup_logging("INFO", log_level)
        from hub.runtime.errors import WorkerConfigError

        overrides = {"bootstrap.servers": bootstrap, "rest.host.name": host}
        try:
            settings = (
                WorkerConfig.from_file(config, **overrides) if config
                else WorkerConfig.from_mapping(overrides)
            )  # fmt: skip
        except WorkerConfigError as exc:
            fail(str(exc), details=exc.errors, code=2)
        server = RegistryServer(
            settings.client_config("admin"), host=host, port=port, settings=settings, topic=topic
        )
        try:
            server.start()
        except Exception as exc:
            _fail(str(exc))
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        while not stop.wait(0.5):
            pass
        server.stop()
