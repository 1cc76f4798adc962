"""``sluice`` sub-commands of the broker layer.

``sluice broker`` runs the broker; ``topics``, ``produce``, ``consume`` and ``groups`` are admin
and console tools that speak to any Kafka-compatible ``--bootstrap`` through confluent-kafka.
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Adds the broker layer's commands to the top-level ``sluice`` app."""
    from broker.cli import serve

    serve.register(app)
    try:
        from broker.cli import admin
    except ImportError:  # admin tools not built yet
        return
    admin.register(app)
