"""``sluice broker``: run the broker in the foreground until Ctrl-C or SIGTERM.

Both signals trigger the same clean shutdown (stop accepting, close connections, flush and
close every partition log), so a supervisor's SIGTERM loses nothing. The one INFO line
``broker listening address=...`` is what scripts and the test fixture wait for.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import typer

log = logging.getLogger(__name__)


def register(app: typer.Typer) -> None:
    @app.command()
    def broker(
        data_dir: Path = typer.Option(Path("./data"), help="Where partitions and metadata live."),
        host: str = typer.Option("127.0.0.1", help="Address to listen on."),
        port: int = typer.Option(9092, help="Port to listen on (0 = any free port)."),
        advertised_host: str | None = typer.Option(
            None, help="Host name clients should connect to (default: --host)."
        ),
        advertised_port: int | None = typer.Option(None, help="Port clients should use."),
        node_id: int = typer.Option(1, help="This broker's node id."),
        num_partitions: int = typer.Option(1, help="Partitions of auto-created topics."),
        auto_create_topics: bool = typer.Option(
            True, help="Create unknown topics on first Metadata request."
        ),
        max_request_size: int = typer.Option(
            100 * 1024 * 1024, help="Largest request frame accepted (bytes)."
        ),
        group_initial_rebalance_delay_ms: int = typer.Option(
            3_000, help="How long a new group waits for more members before its first rebalance."
        ),
        group_min_session_timeout_ms: int = typer.Option(
            6_000, help="Smallest session.timeout.ms a consumer may ask for."
        ),
        log_level: str | None = typer.Option(
            None, help="DEBUG, INFO, WARNING... (default INFO, or $SLUICE_LOG_LEVEL)."
        ),
    ) -> None:
        """Run the Kafka-compatible broker in the foreground (Ctrl-C stops it cleanly)."""
        from broker.config import BrokerConfig
        from sluice.logs import setup_logging

        setup_logging("INFO", log_level)
        config = BrokerConfig(
            data_dir=data_dir,
            host=host,
            port=port,
            advertised_host=advertised_host,
            advertised_port=advertised_port,
            node_id=node_id,
            num_partitions=num_partitions,
            auto_create_topics=auto_create_topics,
            max_request_size=max_request_size,
            group_initial_rebalance_delay_ms=group_initial_rebalance_delay_ms,
            group_min_session_timeout_ms=group_min_session_timeout_ms,
        )
        if not run(config):
            raise typer.Exit(1)


def run(config: object) -> bool:
    """Runs the broker until a signal; False if it could not start."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(_serve(config))
    return uvloop.run(_serve(config))


async def _serve(config: object) -> bool:
    from broker.app import Broker, BrokerStartError
    from broker.config import BrokerConfig

    assert isinstance(config, BrokerConfig)
    broker = Broker(config)
    try:
        await broker.start()
    except BrokerStartError as exc:
        log.error("broker failed to start", extra={"error": str(exc)})
        return False
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
        log.info("shutting down")
    finally:
        await broker.stop()
    return True
