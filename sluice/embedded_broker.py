"""The Sluice broker run inside the hub's process (``sluice up``), on its own thread.

The broker is asyncio code; the hub is threads (tasks) plus uvicorn. The broker gets a private
event loop on a dedicated thread so neither can starve the other's loop: ``start`` returns
once the broker is listening (or raises why it could not start), ``stop`` runs the broker's
clean shutdown on that loop (connections closed, logs flushed) and joins the thread. The hub
still talks to it only through Kafka clients over the socket, exactly as to a remote cluster.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any

log = logging.getLogger(__name__)


class EmbeddedBroker:
    def __init__(self, config: Any) -> None:
        """``config`` is a ``broker.config.BrokerConfig``."""
        self.config = config
        self.broker: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None

    @property
    def bootstrap(self) -> str:
        host, port = self.broker.address
        return f"{host}:{port}"

    def listener_bootstrap(self, name: str) -> str:
        """``host:port`` of the listener called ``name`` (its bound port when it asked for 0)."""
        host, port = self.broker.advertised(name)
        return f"{host}:{port}"

    def start(self, timeout: float = 60.0) -> None:
        started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._run, args=(started,), name="embedded-broker", daemon=True
        )
        self._thread.start()
        started.result(timeout)

    def _run(self, started: concurrent.futures.Future[None]) -> None:
        try:
            import uvloop

            loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
        except ImportError:
            loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve(started))
        finally:
            loop.close()

    async def _serve(self, started: concurrent.futures.Future[None]) -> None:
        from broker.app import Broker

        self._stopped = asyncio.Event()
        self.broker = Broker(self.config)
        try:
            await self.broker.start()
        except BaseException as exc:
            started.set_exception(exc)
            return
        started.set_result(None)
        await self._stopped.wait()
        await self.broker.stop()

    def stop(self, timeout: float = 30.0) -> None:
        if self._loop is None or self._thread is None or self._stopped is None:
            return
        self._loop.call_soon_threadsafe(self._stopped.set)
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("embedded broker did not stop in time")
