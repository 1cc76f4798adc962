"""``sluice`` sub-commands of the broker layer.

``topics``, ``produce``, ``consume``, ``groups``, ``transactions``, ``users``, ``acls`` and
``quotas`` are admin and console tools that speak to any Kafka-compatible ``--bootstrap``
(through the ``kafka_admin`` layer and confluent-kafka; ``transactions`` and ``quotas``
through kafka-python's admin client, which has those APIs; ``acls`` as kafka-acls.sh does,
``quotas`` as kafka-configs.sh does). ``sluice broker`` itself is the application's
(``sluice.commands``), like ``up`` and ``connect``.
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Adds the broker layer's commands to the top-level ``sluice`` app."""
    from broker.cli import console, topics_cluster  # noqa: F401 - registers commands
    from broker.cli.acls import acls_app
    from broker.cli.groups import groups_app
    from broker.cli.quotas import quotas_app
    from broker.cli.topics import topics_app
    from broker.cli.transactions import transactions_app
    from broker.cli.users import users_app

    app.add_typer(topics_app, name="topics")
    console.register(app)
    app.add_typer(groups_app, name="groups")
    app.add_typer(transactions_app, name="transactions")
    app.add_typer(users_app, name="users")
    app.add_typer(acls_app, name="acls")
    app.add_typer(quotas_app, name="quotas")
