"""The ``sluice`` command line: one entry point, one sub-command group per layer.

Each layer contributes its commands from its own ``cli`` module so this file stays a table of
contents. Commands that talk to a broker take ``--bootstrap`` and work against any
Kafka-compatible cluster, not only Sluice's own broker.
"""

from __future__ import annotations

import typer

from sluice import __version__

app = typer.Typer(
    name="sluice",
    help="Sluice: Kafka-compatible broker, connector hub and pipelines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def version() -> None:
    """Print the Sluice version."""
    typer.echo(__version__)


def _register_layers() -> None:
    from broker.cli import register as register_broker

    register_broker(app)
    __import__("hub.connectors_cli").connectors_cli.register(app)  # sluice connectors ...
    __import__("hub.cli").cli.register(app)  # sluice up, sluice connect
    __import__("spark_pipelines.cli").cli.register(app)  # sluice pipelines ...


def main() -> None:
    _register_layers()
    app()
