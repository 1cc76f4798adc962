"""``sluice broker``: run the broker in the foreground."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def broker(
        data_dir: Path = typer.Option(Path("./data"), help="Where partitions and metadata live."),
        host: str = typer.Option("127.0.0.1", help="Address to listen on."),
        port: int = typer.Option(9092, help="Port to listen on."),
    ) -> None:
        """Run the Kafka-compatible broker in the foreground (Ctrl-C stops it cleanly)."""
        typer.echo("the broker server is not built yet", err=True)
        raise typer.Exit(1)
