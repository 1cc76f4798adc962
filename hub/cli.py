"""``sluice up`` (embedded broker + hub worker + REST API) and ``sluice connect`` (a hub worker
against any Kafka-compatible cluster).

Start order: broker (``up`` only), then the herder (internal topics created and read to their
end, connectors resumed in their target states), then the REST API; ``hub listening
address=...`` is logged once the API accepts connections, which is what scripts and the test
fixture wait for. Ctrl-C and SIGTERM (uvicorn's handlers, or ours without the API) stop in the
reverse order: the API first so no request sees a half-stopped herder, then every task (source
offsets committed after waiting for outstanding acknowledgements, sink offsets committed after
``pre_commit``), then the broker, which flushes its logs.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import threading
from pathlib import Path
from typing import Any

import typer

log = logging.getLogger(__name__)


def register(app: typer.Typer) -> None:
    """Adds ``up`` and ``connect`` to the top-level ``sluice`` app."""

    @app.command()
    def up(
        data_dir: Path = typer.Option(Path("./data"), help="Where the broker keeps its data."),
        broker_port: int = typer.Option(9092, help="Kafka port of the embedded broker (0 = any)."),
        rest_port: int = typer.Option(8083, help="Port of the REST API."),
        host: str = typer.Option("127.0.0.1", help="Address the broker and the API listen on."),
        config: Path | None = typer.Option(
            None, help="Worker settings (.properties or .json); flags override them."
        ),
        log_level: str | None = typer.Option(None, help="DEBUG, INFO, WARNING..."),
        broker_thread: bool = typer.Option(
            False,
            "--broker-thread",
            help="Run the broker on a thread of this process instead of a child process "
            "(one process, less memory, lower throughput).",
        ),
    ) -> None:
        """Run a broker, a hub worker and the REST API with one command (Ctrl-C stops cleanly).

        The broker runs in a child process by default, so it and the worker don't share one
        GIL; it stops with the hub, and dies with it if the hub is killed."""
        from broker.config import BrokerConfig
        from hub.runtime.broker_process import BrokerProcess
        from hub.runtime.embedded_broker import EmbeddedBroker
        from sluice.logs import setup_logging

        setup_logging("INFO", log_level)
        # One machine, one hub: no reason to wait 3 s for more group members to show up.
        broker_config = BrokerConfig(
            data_dir=data_dir, host=host, port=broker_port, group_initial_rebalance_delay_ms=0
        )
        broker: Any = (
            EmbeddedBroker(broker_config)
            if broker_thread
            else BrokerProcess(broker_config, log_level)
        )
        try:
            broker.start()
        except Exception as exc:
            log.error("broker failed to start", extra={"error": str(exc)})
            raise typer.Exit(1) from None
        try:
            worker = _worker_config(config, broker.bootstrap, rest_port, host)
            _run_hub(worker)
        finally:
            broker.stop()

    @app.command()
    def connect(
        bootstrap: str = typer.Option(..., help="HOST:PORT of any Kafka-compatible cluster."),
        rest_port: int = typer.Option(8083, help="Port of the REST API."),
        host: str = typer.Option("127.0.0.1", help="Address the REST API listens on."),
        config: Path | None = typer.Option(
            None, help="Worker settings (.properties or .json); flags override them."
        ),
        log_level: str | None = typer.Option(None, help="DEBUG, INFO, WARNING..."),
    ) -> None:
        """Run a hub worker and its REST API against an existing cluster."""
        from sluice.logs import setup_logging

        setup_logging("INFO", log_level)
        _run_hub(_worker_config(config, bootstrap, rest_port, host))


def _worker_config(path: Path | None, bootstrap: str, rest_port: int, host: str) -> Any:
    from hub.runtime.config import WorkerConfig

    overrides = {"bootstrap.servers": bootstrap, "rest.port": rest_port, "rest.host.name": host}
    if path is not None:
        return WorkerConfig.from_file(path, **overrides)
    return WorkerConfig.from_mapping(overrides)


def _tune_gc() -> None:
    """Once, at worker start (``sluice up`` / ``sluice connect``), before any task runs.

    Tasks allocate many short-lived, acyclic objects per record (records, headers, offsets);
    with the default threshold (700) the cyclic collector ran every few hundred records and
    took ~40% of a source task's CPU, scanning long-lived objects each time. Freezing what
    startup allocated (modules, plugin classes, configs) moves it out of every collection,
    and a 50,000 threshold makes the young collections rare; reference counting still frees
    almost everything at once. The broker's own loop is unaffected in behaviour.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


def _run_hub(worker_config: Any) -> None:
    from hub.runtime.herder import Herder

    _tune_gc()
    herder = Herder(worker_config)
    try:
        herder.start()
    except Exception as exc:
        log.error("hub failed to start", extra={"error": str(exc)}, exc_info=True)
        herder.stop()
        raise typer.Exit(1) from None
    try:
        _serve(herder, worker_config)
    finally:
        log.info("hub stopping")
        herder.stop()
        log.info("hub stopped")


def _serve(herder: Any, worker_config: Any) -> None:
    """Serves the REST API until a signal (or just waits for one without the API)."""
    try:
        from hub.rest.app import create_app
    except ModuleNotFoundError as exc:
        if exc.name not in ("hub.rest", "hub.rest.app"):
            raise  # the API is installed but broken: fail loudly, not headless
        log.warning("REST API (hub.rest) not installed; running the worker only")
        _wait_for_signal()
        return
    import uvicorn

    app = create_app(herder, worker_config)
    host, port = worker_config.rest_host_name, worker_config.rest_port
    server = uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off")
    )
    threading.Thread(target=_announce, args=(server, host, port), daemon=True).start()
    # uvicorn handles SIGINT/SIGTERM while serving, then restores the previous handlers and
    # re-raises the signal; with the default handlers that would kill the process before the
    # herder commits offsets, so the handlers it restores only log.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _late_signal)
    server.run()


_late_signals = 0


def _late_signal(signum: int, _frame: Any) -> None:
    """The first signal (re-raised by uvicorn) lets shutdown finish; a second one forces exit."""
    global _late_signals
    _late_signals += 1
    name = signal.Signals(signum).name
    if _late_signals == 1:
        log.info("signal received; finishing shutdown", extra={"signal": name})
        return
    log.warning("second signal: exiting without a clean shutdown", extra={"signal": name})
    os._exit(1)


def _announce(server: Any, host: str, port: int) -> None:
    """Logs ``hub listening`` once uvicorn has bound its socket."""
    deadline = threading.Event()
    while not server.started and not server.should_exit:
        deadline.wait(0.02)
    if server.started:
        log.info("hub listening", extra={"address": f"{host}:{port}"})


def _wait_for_signal() -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    log.info("hub worker running (no REST API)")
    while not stop.wait(0.5):
        pass
