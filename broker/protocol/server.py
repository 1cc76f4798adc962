"""The TCP listener: accepts connections and runs each as its own task.

Each connection is independent (see ``connection.py``): one slow or misbehaving client never
delays or breaks another. ``stop()`` closes the listener, then cancels the connection tasks, so
a shutdown does not wait for parked long-poll fetches.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import TYPE_CHECKING

from broker.protocol.connection import Connection

if TYPE_CHECKING:
    from broker.app import Broker

log = logging.getLogger(__name__)

# StreamReader pauses the socket when its buffer passes 2x this; the 64 KiB default would
# pause and resume many times while a 1 MiB produce request arrives.
_READ_LIMIT = 4 << 20


class ClientReader(asyncio.StreamReader):
    """A StreamReader that also tells when the client hung up, even while nobody reads.

    A connection reads its next frame only after answering the current one, so a client that
    disconnects during a long-poll Fetch would go unnoticed until ``max_wait`` ends. The
    protocol feeds EOF (or the error) here as soon as it happens; ``hung_up`` resolves then,
    and the fetch answers at once (answering early is always allowed).
    """

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.hung_up: asyncio.Future[None] = loop.create_future()

    def _hang_up(self) -> None:
        if not self.hung_up.done():
            self.hung_up.set_result(None)

    def feed_eof(self) -> None:
        super().feed_eof()
        self._hang_up()

    def set_exception(self, exc: Exception) -> None:
        super().set_exception(exc)
        self._hang_up()


class Server:
    """Listens on (host, port) and serves the Kafka protocol for a ``Broker``."""

    def __init__(self, broker: Broker, host: str, port: int) -> None:
        self._broker = broker
        self._host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> tuple[str, int]:
        """Binds and starts accepting; returns the bound address (useful with port 0)."""
        loop = asyncio.get_running_loop()

        def protocol() -> asyncio.StreamReaderProtocol:
            reader = ClientReader(limit=_READ_LIMIT, loop=loop)
            return asyncio.StreamReaderProtocol(reader, self._accept, loop=loop)

        self._server = await loop.create_server(
            protocol, self._host, self._port, reuse_address=True, backlog=1024
        )
        name = self._server.sockets[0].getsockname()
        return name[0], name[1]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await Connection(self._broker, reader, writer).run()
        except asyncio.CancelledError:
            pass
        except Exception:  # a bug in the connection loop must not reach the server
            log.exception(
                "connection task failed", extra={"peer": writer.get_extra_info("peername")}
            )
        finally:
            self._tasks.discard(task)

    @property
    def connection_count(self) -> int:
        return len(self._tasks)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None
