"""``sluice`` sub-commands of the broker layer.

``sluice broker`` runs the broker; ``topics``, ``produce``, ``consume`` and ``groups`` are admin
and console tools that speak to any Kafka-compatible ``--bootstrap`` through confluent-kafka.
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Adds the broker layer's commands to the top-level ``sluice`` app."""
    from broker.cli import console, serve
    from broker.cli.groups import groups_app
    from broker.cli.topics import topics_app

    serve.register(app)
    app.add_typer(topics_app, name="topics")
    console.register(app)
    app.add_typer(groups_app, name="groups")
