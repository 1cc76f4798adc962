"""``sluice connectors``: a hub's connectors from the terminal, through its REST API.

Every command is one or two REST calls (``hub.rest.client``), so it works against a Sluice hub
and against Apache Kafka Connect alike. Failures print one red line, the per-field reasons of
an invalid config, and a hint naming the next command to run; never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from sluice.terminal import escape, out, success, table
from sluice.terminal import fail as _fail

if TYPE_CHECKING:
    from hub.rest.client import ConnectClient, ConnectClientError

# The worker's defaults (rest.host.name, rest.port). httpx (via hub.rest.client) is imported
# only when a command runs, so registering these commands costs every `sluice` call nothing.
DEFAULT_URL = "http://127.0.0.1:8083"

connectors_app = typer.Typer(
    help="List, create, configure, control and delete connectors (REST API client).",
    no_args_is_help=True,
)
UrlOpt = typer.Option(
    DEFAULT_URL, "--url", envvar="SLUICE_REST_URL", help="The hub's REST API; env SLUICE_REST_URL."
)
TokenOpt = typer.Option(
    None,
    "--token",
    envvar="SLUICE_REST_TOKEN",
    help="Bearer token (rest.auth.token). Default: the hub's generated token, read from "
    "$SLUICE_REST_TOKEN_FILE, $SLUICE_DATA_DIR/hub.token or ./data/hub.token (local hubs).",
)
UserOpt = typer.Option(
    None, "--user", envvar="SLUICE_REST_BASIC", help="USER:PASSWORD for basic auth."
)
NameArg = typer.Argument(..., help="The connector's name.")
_STATE_STYLE = {"RUNNING": "green", "FAILED": "red", "PAUSED": "yellow", "STOPPED": "yellow"}


def fail(
    message: str, hint: str | None = None, errors: dict[str, list[str]] | None = None
) -> NoReturn:
    if errors:  # the message repeats every field's reasons; list them one per line instead
        message = f"invalid configuration: {len(errors)} field(s) rejected"
    _fail(message, hint, details=errors)


@contextmanager
def rest(
    url: str, token: str | None, user: str | None, name: str | None = None
) -> Iterator[ConnectClient]:
    """A client whose errors end the command with a message and a hint."""
    from hub.rest.client import ConnectClient, ConnectClientError
    from hub.rest.token_file import TokenFileError, local_token

    if not token and not user:
        try:
            token = local_token(url, os.environ.get("SLUICE_REST_TOKEN_FILE"))
        except TokenFileError as exc:
            fail(str(exc), "set SLUICE_REST_TOKEN_FILE to the hub's <data dir>/hub.token")
    client = ConnectClient(url, token=token, basic=user)
    try:
        yield client
    except ConnectClientError as exc:
        fail(exc.message, _hint(exc, url, name), exc.errors)
    finally:
        client.close()


def _hint(exc: ConnectClientError, url: str, name: str | None) -> str | None:
    if exc.status == 0:
        return "start a hub with `sluice up`, or point --url (env SLUICE_REST_URL) at one"
    if exc.status == 401:
        return (
            "pass --token (SLUICE_REST_TOKEN) or --user USER:PASSWORD (SLUICE_REST_BASIC); "
            "for a hub started with `sluice up`, set SLUICE_DATA_DIR to its --data-dir or "
            "SLUICE_REST_TOKEN_FILE to its hub.token"
        )
    if exc.status == 404 and name:
        return "see the connectors with `sluice connectors list`"
    if exc.status == 409 and "STOPPED" in exc.message and name:
        return f"stop it first with `sluice connectors stop {name}`"
    if exc.status == 409 and name:
        return f"change it with `sluice connectors config {name} --set KEY=VALUE`, or delete it"
    if exc.status == 400 and exc.errors:
        return f"a plugin's keys and their docs: GET {url}/connector-plugins/<class>/config"
    return None


def _state(state: str) -> str:
    style = _STATE_STYLE.get(state)
    return f"[{style}]{state}[/{style}]" if style else state


def _print_json(value: Any) -> None:
    # Plain JSON on stdout so the output pipes into jq or back into `create`/`offsets --set`.
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=True) + "\n")


def _read_json(path: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")


def _connector_file(file: str, name: str | None) -> tuple[str, dict[str, Any]]:
    """(name, config) of a ``{"name", "config"}`` or flat-config JSON file; exits if unnamed."""
    body = _read_json(file)
    if not isinstance(body, dict):
        fail(f"{file} must hold a JSON object")
    nested = body.get("config")
    config: dict[str, Any] = nested if isinstance(nested, dict) else body
    chosen = name or body.get("name") or config.get("name")
    if not chosen:
        fail(f"{file} names no connector", 'add "name" to the file or pass --name NAME')
    return str(chosen), {k: v for k, v in config.items() if k != "name" or v == chosen}


def _task_summary(tasks: list[dict[str, Any]]) -> str:
    if not tasks:
        return "0"
    states: dict[str, int] = {}
    for task in tasks:
        states[task.get("state", "?")] = states.get(task.get("state", "?"), 0) + 1
    return ", ".join(f"{count} {_state(state)}" for state, count in sorted(states.items()))


@connectors_app.command("list")
def list_(url: str = UrlOpt, token: str | None = TokenOpt, user: str | None = UserOpt) -> None:
    """List connectors with their type, class, state and tasks."""
    with rest(url, token, user) as client:
        expanded = client.connectors(("status", "info"))
    if not expanded:
        out.print("no connectors; create one with `sluice connectors create FILE.json`")
        return
    rows = table("name", "type", "class", "state", "tasks")
    for name, entry in sorted(expanded.items()):
        status = entry.get("status") or {}
        info = entry.get("info") or {}
        rows.add_row(
            escape(name),
            info.get("type") or status.get("type", "?"),
            escape(str(info.get("config", {}).get("connector.class", "?"))),
            _state(status.get("connector", {}).get("state", "?")),
            _task_summary(status.get("tasks", [])),
        )
    out.print(rows)


@connectors_app.command()
def create(
    file: str = typer.Argument(
        ..., help='JSON file ({"name", "config"} or a flat config); - = stdin.'
    ),
    name: str | None = typer.Option(None, "--name", help="Name when the file does not give one."),
    url: str = UrlOpt,
    token: str | None = TokenOpt,
    user: str | None = UserOpt,
) -> None:
    """Create a connector from a JSON file, as POSTed to Kafka Connect."""
    chosen, config = _connector_file(file, name)
    with rest(url, token, user, chosen) as client:
        info = client.create(chosen, config)
    tasks = len(info.get("tasks", []))
    kind = info.get("type", "?")
    out.print(f"created connector [bold]{escape(chosen)}[/bold] ({kind}, {tasks} task(s))")


@connectors_app.command()
def config(
    name: str = NameArg,
    set_: list[str] = typer.Option([], "--set", help="KEY=VALUE to change, repeatable."),
    unset: list[str] = typer.Option([], "--unset", help="KEY to remove, repeatable."),
    url: str = UrlOpt,
    token: str | None = TokenOpt,
    user: str | None = UserOpt,
) -> None:
    """Print a connector's config as JSON, or change keys with --set / --unset."""
    patch: dict[str, str | None] = {}
    for pair in set_:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            fail(f"--set {pair!r} is not KEY=VALUE")
        patch[key] = value
    patch.update({key: None for key in unset})
    with rest(url, token, user, name) as client:
        if not patch:
            _print_json(client.config(name))
            return
        client.patch_config(name, patch)
    out.print(f"updated connector [bold]{escape(name)}[/bold]: {escape(', '.join(patch))}")


def _print_status(status: dict[str, Any], traces: bool) -> None:
    connector = status.get("connector", {})
    out.print(
        f"[bold]{escape(status.get('name', '?'))}[/bold] ({status.get('type', '?')}) "
        f"{_state(connector.get('state', '?'))} on {escape(connector.get('worker_id', '?'))}"
    )
    if connector.get("trace"):
        out.print(escape(connector["trace"] if traces else connector["trace"].splitlines()[0]))
    rows = table("task", "state", "worker", "error")
    for task in status.get("tasks", []):
        trace = task.get("trace") or ""
        rows.add_row(
            str(task.get("id")),
            _state(task.get("state", "?")),
            escape(task.get("worker_id", "")),
            escape(trace if traces else (trace.strip().splitlines() or [""])[-1]),
        )
    if status.get("tasks"):
        out.print(rows)


@connectors_app.command()
def status(
    name: str = NameArg,
    trace: bool = typer.Option(False, "--trace", help="Show whole stack traces."),
    url: str = UrlOpt,
    token: str | None = TokenOpt,
    user: str | None = UserOpt,
) -> None:
    """Show the state of a connector and each of its tasks."""
    with rest(url, token, user, name) as client:
        _print_status(client.status(name), trace)


def _lifecycle(verb: str, done: str) -> None:
    def command(
        name: str = NameArg,
        url: str = UrlOpt,
        token: str | None = TokenOpt,
        user: str | None = UserOpt,
    ) -> None:
        with rest(url, token, user, name) as client:
            client.action(name, verb)
        out.print(f"{done} [bold]{escape(name)}[/bold]")

    command.__doc__ = f"{verb.capitalize()} a connector and its tasks."
    connectors_app.command(verb)(command)


_lifecycle("pause", "pause requested for")
_lifecycle("resume", "resume requested for")
_lifecycle("stop", "stopped")


@connectors_app.command()
def restart(
    name: str = NameArg,
    include_tasks: bool = typer.Option(False, "--include-tasks", help="Restart its tasks too."),
    only_failed: bool = typer.Option(False, "--only-failed", help="Only what has FAILED."),
    task: int | None = typer.Option(None, "--task", help="Restart only this task."),
    url: str = UrlOpt,
    token: str | None = TokenOpt,
    user: str | None = UserOpt,
) -> None:
    """Restart a connector (and with --include-tasks its tasks), or one task."""
    with rest(url, token, user, name) as client:
        if task is not None:
            client.restart_task(name, task)
            out.print(f"restarted task {task} of [bold]{escape(name)}[/bold]")
            return
        result = client.restart(name, include_tasks=include_tasks, only_failed=only_failed)
    out.print(f"restart requested for [bold]{escape(name)}[/bold]")
    if result:
        _print_status(result, traces=False)


@connectors_app.command()
def offsets(
    name: str = NameArg,
    reset: bool = typer.Option(False, "--reset", help="Delete all offsets (connector STOPPED)."),
    set_file: str | None = typer.Option(
        None, "--set", help='JSON file: {"offsets": [{"partition", "offset"}]} or the list.'
    ),
    url: str = UrlOpt,
    token: str | None = TokenOpt,
    user: str | None = UserOpt,
) -> None:
    """Print a connector's offsets as JSON, or --reset / --set them (connector STOPPED)."""
    if reset and set_file:
        fail("pass either --reset or --set, not both")
    body = _read_json(set_file) if set_file else None
    entries = body.get("offsets") if isinstance(body, dict) else body
    if set_file and not isinstance(entries, list):
        fail(f'{set_file} must hold {{"offsets": [...]}} or a JSON list')
    with rest(url, token, user, name) as client:
        if reset:
            success(client.reset_offsets(name) or "offsets reset")
        elif entries is not None:
            success(client.alter_offsets(name, entries) or "offsets altered")
        else:
            _print_json(client.offsets(name))


@connectors_app.command()
def delete(
    name: str = NameArg, url: str = UrlOpt, token: str | None = TokenOpt, user: str | None = UserOpt
) -> None:
    """Delete a connector: stop its tasks and drop its config."""
    with rest(url, token, user, name) as client:
        client.delete(name)
    out.print(f"deleted connector [bold]{escape(name)}[/bold]")


@connectors_app.command()
def validate(
    file: str = typer.Argument(
        ..., help='JSON file ({"name", "config"} or a flat config); - = stdin.'
    ),
    name: str | None = typer.Option(None, "--name", help="Name when the file does not give one."),
    url: str = UrlOpt,
    token: str | None = TokenOpt,
    user: str | None = UserOpt,
) -> None:
    """Check a connector config without creating it: one line per rejected key, exit 1."""
    chosen, config = _connector_file(file, name)
    config["name"] = chosen  # Connect validates the name too
    plugin = config.get("connector.class")
    if not plugin:
        fail(f"{file} has no connector.class", "add the plugin's class or alias to the config")
    with rest(url, token, user) as client:
        result = client.validate(str(plugin), {k: str(v) for k, v in config.items()})
    errors = {
        entry["value"]["name"]: list(entry["value"]["errors"])
        for entry in result.get("configs", [])
        if entry.get("value", {}).get("errors")
    }
    if errors:
        _fail(f"{file}: {len(errors)} key(s) rejected", details=errors)
    success(f"{file}: valid {plugin} config for {chosen} ({len(config)} keys)")


@connectors_app.command()
def plugins(
    all_plugins: bool = typer.Option(
        False, "--all", help="Also list transforms, converters and predicates."
    ),
    url: str = UrlOpt,
    token: str | None = TokenOpt,
    user: str | None = UserOpt,
) -> None:
    """The plugins the hub has installed: class, type, version."""
    with rest(url, token, user) as client:
        found = client.plugins(connectors_only=not all_plugins)
    rows = table("class", "type", "version")
    for plugin in sorted(found, key=lambda p: (str(p.get("type")), str(p.get("class")))):
        rows.add_row(
            escape(str(plugin.get("class", "?"))),
            str(plugin.get("type", "?")),
            escape(str(plugin.get("version", ""))),
        )
    out.print(rows)


def register(app: typer.Typer) -> None:
    """Adds ``sluice connectors ...`` to the top-level app."""
    app.add_typer(connectors_app, name="connectors")
