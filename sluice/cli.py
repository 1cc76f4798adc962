"""The ``sluice`` command line: one entry point, one sub-command group per layer.

Each layer contributes its commands from its own ``cli`` module so this file stays a table of
contents. Commands that talk to a broker take ``--bootstrap`` and work against any
Kafka-compatible cluster, not only Sluice's own broker.

Help output is tidied once, here, for every command (``tidy_help``): typer shows each
parameter's Python type (``--follow <bool>``, ``TOPIC <str>``), which says nothing a user
needs; options get click's upper-case value names instead (``--partitions INTEGER``), flags and
arguments none. tests/sluice/test_cli_help.py walks every command and option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args, get_origin

import typer
import typer.main

from sluice import __version__

app = typer.Typer(
    name="sluice",
    help="Sluice: Kafka-compatible broker, connector hub and pipelines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_VALUE_NAMES: dict[Any, str] = {str: "TEXT", int: "INTEGER", float: "NUMBER", Path: "PATH"}


@app.command()
def version() -> None:
    """Print the Sluice version."""
    typer.echo(__version__)


def _register_layers() -> None:
    from broker.cli import register as register_broker

    register_broker(app)  # sluice topics|groups|produce|consume
    __import__("hub.connectors_cli").connectors_cli.register(app)  # sluice connectors ...
    __import__("sluice.commands").commands.register(app)  # sluice up, connect, broker
    __import__("spark_pipelines.cli").cli.register(app)  # sluice pipelines ...
    __import__("sluice.mirror_cli").mirror_cli.register(app)  # sluice mirror
    __import__("schema_registry.cli").cli.register_commands(app)  # schemas, schema-registry


def _value_name(param: Any) -> str:
    """``TEXT``, ``INTEGER``, ``NUMBER``, ``PATH`` or ``a|b`` for an option's value."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None and getattr(descriptor, "is_choice", False) and descriptor.choices:
        return "|".join(str(getattr(c, "value", c)) for c in descriptor.choices)
    annotation = getattr(descriptor, "annotation", None)
    if get_origin(annotation) is list:
        (annotation,) = get_args(annotation)
    if annotation in _VALUE_NAMES:
        return _VALUE_NAMES[annotation]
    click_type = getattr(param, "type", None)  # typer releases built on click's types
    return str(getattr(click_type, "name", "value")).upper()


class _QuietArgument(typer.core.TyperArgument):
    """An argument whose help row shows its name only (no Python type)."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None


def tidy_help(command: Any) -> None:
    """Sets every parameter's displayed value name in ``command`` and its sub-commands."""
    context_class = getattr(command, "context_class", None)
    params = list(getattr(command, "params", []))
    if context_class is not None:
        help_option = command.get_help_option(context_class(command))
        if help_option is not None:
            params.append(help_option)
    for param in params:
        if getattr(param, "param_type_name", "") == "argument":
            if param.metavar is None:
                param.metavar = (param.name or "value").upper()
            if isinstance(param, typer.core.TyperArgument):
                param.__class__ = _QuietArgument
        elif getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        elif param.metavar is None:
            param.metavar = _value_name(param)
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)


def build() -> Any:
    """The click command of ``sluice`` with every layer registered and its help tidied."""
    _register_layers()
    command = typer.main.get_command(app)
    tidy_help(command)
    return command


def main() -> None:
    build()(prog_name="sluice")
