"""``sluice mirror --config mm2.properties``: MirrorMaker 2's dedicated mode on the hub runtime.

Kafka's ``connect-mirror-maker.sh``: one file describes the clusters and flows
(``connectors.mirror.driver_config``); every flow gets its own worker (a ``Herder`` in this
process, on the flow's *target* cluster, with that flow's internal topics) running the flow's
MirrorSource, MirrorCheckpoint and MirrorHeartbeat connectors. ``--clusters B`` runs only the
flows that target B (as Kafka's ``--clusters``), so one process per target cluster can sit
next to it. No REST API: the file is the configuration; a connector whose config changed in
the file is reconfigured on start, an unchanged one resumes from its committed offsets.

Start order: every worker (stores read to their end), then the connector configs; ``mirror
running flows=...`` is logged once all run. Ctrl-C or SIGTERM stops every worker, committing
source offsets after outstanding records are acknowledged; a second signal exits at once.
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


class MirrorDriver:
    """The workers of the flows one ``mm2.properties`` describes."""

    def __init__(self, properties: dict[str, str], clusters: list[str] | None = None) -> None:
        from connectors.mirror.driver_config import DriverConfig

        self.config = DriverConfig(properties)
        unknown = set(clusters or ()) - set(self.config.clusters)
        if unknown:
            raise ValueError(f"--clusters: {', '.join(sorted(unknown))} not in clusters")
        self.flows = [f for f in self.config.flows() if not clusters or f.target in clusters]
        self.herders: list[Any] = []

    def start(self) -> None:
        from hub.api import ConfigError
        from hub.runtime.config import WorkerConfig
        from hub.runtime.herder import Herder

        for flow in self.flows:
            herder = Herder(WorkerConfig.from_mapping(flow.worker))
            self.herders.append(herder)
            herder.start()
            for name, config in flow.connectors.items():
                if name in herder.connectors() and herder.connector_config(name) == {
                    **config,
                    "name": name,
                }:
                    continue
                try:
                    herder.put_connector_config(name, config)
                except ConfigError as exc:
                    reasons = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.errors.items())
                    raise ValueError(f"flow {flow.name}, {name}: {reasons or exc}") from None
            log.info("mirror flow started", extra={"flow": flow.name})
        log.info("mirror running", extra={"flows": ",".join(f.name for f in self.flows)})

    def stop(self) -> None:
        for herder in reversed(self.herders):
            try:
                herder.stop()
            except Exception:
                log.exception("mirror worker did not stop cleanly")
        self.herders.clear()


def register(app: typer.Typer) -> None:
    """Adds ``mirror`` to the top-level ``sluice`` app."""

    @app.command()
    def mirror(
        config: Path = typer.Option(..., help="MirrorMaker 2 properties (clusters, flows)."),
        clusters: list[str] = typer.Option(
            [], "--clusters", help="Run only the flows that target these cluster aliases."
        ),
        log_level: str | None = typer.Option(None, help="DEBUG, INFO, WARNING..."),
    ) -> None:
        """Replicate between Kafka-protocol clusters, as MirrorMaker 2's dedicated mode."""
        from connectors.mirror.driver_config import DriverConfigError, parse_properties
        from sluice.logs import setup_logging

        setup_logging("INFO", log_level)
        try:
            driver = MirrorDriver(parse_properties(config.read_text()), clusters or None)
        except (OSError, ValueError, DriverConfigError) as exc:
            log.error("invalid mirror config", extra={"file": str(config), "error": str(exc)})
            raise typer.Exit(2) from None
        _tune_gc()
        try:
            driver.start()
        except ValueError as exc:
            log.error("invalid mirror config", extra={"file": str(config), "error": str(exc)})
            driver.stop()
            raise typer.Exit(2) from None
        except Exception as exc:
            log.error("mirror failed to start", extra={"error": str(exc)}, exc_info=True)
            driver.stop()
            raise typer.Exit(1) from None
        try:
            _wait_for_signal()
        finally:
            log.info("mirror stopping")
            driver.stop()
            log.info("mirror stopped")


def _tune_gc() -> None:
    """As ``sluice connect`` does before tasks run: freeze the startup heap and make young
    collections rare (tasks allocate many short-lived acyclic objects; see sluice/node.py)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


def _wait_for_signal() -> None:
    stop = threading.Event()
    signals = 0

    def on_signal(signum: int, _frame: Any) -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            log.warning("second signal: exiting without a clean shutdown")
            os._exit(1)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    while not stop.wait(0.5):
        pass
