"""One listener's socket: accepts connections and runs each as its own task.

A broker has one ``Server`` per listener (``listeners=``); each knows its listener's security
(TLS context, SASL settings: ``broker.security.listener_security``) and hands it to its
connections. The connection limits and the queued-bytes budget are broker-wide, shared by
every listener's server (``limits_from``), as Kafka counts them.

Each connection is independent (see ``connection.py``): one slow or misbehaving client never
delays or breaks another. ``stop()`` closes the listener, then cancels the connection tasks, so
a shutdown does not wait for parked long-poll fetches.

Limits (Kafka's settings, see ``limits.py``): an accepted connection beyond
``max.connections`` or ``max.connections.per.ip`` is closed at once; every connection reserves
a request's declared size against ``queued.max.request.bytes`` before reading its body; a
housekeeping task closes connections idle beyond ``connections.max.idle.ms`` and writes the
rate-limited summaries of client errors (``ThrottledLog``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import time
from typing import TYPE_CHECKING

from broker.protocol._reader import ClientReader
from broker.protocol.connection import Connection, client_errors
from broker.protocol.limits import ConnectionQuotas, QueuedBytes, resolve_overrides

if TYPE_CHECKING:
    from broker.app import Broker
    from broker.security.listener_security import ListenerSecurity

log = logging.getLogger(__name__)

TLS_HANDSHAKE_S = 10.0
_SWEEP_MIN_S = 0.01
_SWEEP_MAX_S = 5.0


class Server:
    """Listens on (host, port) and serves the Kafka protocol for a ``Broker``."""

    def __init__(
        self,
        broker: Broker,
        host: str,
        port: int,
        *,
        security: ListenerSecurity | None = None,
        limits_from: Server | None = None,
    ) -> None:
        self._broker = broker
        self._host = host
        self._port = port
        self.security = security
        self._limits_from = limits_from
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._connections: set[Connection] = set()
        config = broker.config
        self.queued_bytes = QueuedBytes(config.queued_request_bytes_limit)
        self.quotas = ConnectionQuotas(config.max_connections, config.max_connections_per_ip, {})
        self._idle_s = config.connections_max_idle_ms / 1000
        self._housekeeping: asyncio.Task[None] | None = None

    async def start(self) -> tuple[str, int]:
        """Binds and starts accepting; returns the bound address (useful with port 0)."""
        loop = asyncio.get_running_loop()
        config = self._broker.config
        if self._limits_from is not None:
            self.quotas = self._limits_from.quotas
            self.queued_bytes = self._limits_from.queued_bytes
        else:
            try:
                overrides = await loop.run_in_executor(
                    None, resolve_overrides, config.max_connections_per_ip_overrides
                )
            except ValueError as exc:
                raise OSError(str(exc)) from exc
            self.quotas = ConnectionQuotas(
                config.max_connections, config.max_connections_per_ip, overrides
            )

        def protocol() -> asyncio.StreamReaderProtocol:
            return asyncio.StreamReaderProtocol(ClientReader(loop), self._accept, loop=loop)

        self._server = await loop.create_server(
            protocol, self._host, self._port, reuse_address=True, backlog=1024,
            ssl=self._ssl_context(), ssl_handshake_timeout=self._handshake_timeout(),
        )  # fmt: skip
        self._housekeeping = loop.create_task(self._housekeep(), name="connection-housekeeping")
        name = self._server.sockets[0].getsockname()
        return name[0], name[1]

    def _ssl_context(self) -> ssl.SSLContext | None:
        return self.security.ssl_context if self.security is not None else None

    def _handshake_timeout(self) -> float | None:
        """A TLS handshake runs before ``_accept`` (so before the connection limits count
        it): a short timeout bounds how long a peer that never finishes one holds a socket."""
        return TLS_HANDSHAKE_S if self._ssl_context() is not None else None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        ip = str(peer[0]) if isinstance(peer, tuple) else str(peer)
        refused = self.quotas.admit(ip)
        if refused is not None:
            client_errors.event(
                "connection refused", "connection refused", peer=_peer(peer), reason=refused
            )
            writer.close()
            return
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = Connection(
            self._broker, reader, writer, queued_bytes=self.queued_bytes, security=self.security
        )
        self._connections.add(connection)
        try:
            await connection.run()
        except asyncio.CancelledError:
            pass
        except Exception:  # a bug in the connection loop must not reach the server
            log.exception("connection task failed", extra={"peer": _peer(peer)})
        finally:
            self._connections.discard(connection)
            self.quotas.release(ip)
            self._tasks.discard(task)

    async def _housekeep(self) -> None:
        """Closes idle connections and flushes the client-error summaries, periodically."""
        interval = min(max(self._idle_s / 4, _SWEEP_MIN_S), _SWEEP_MAX_S)
        while True:
            await asyncio.sleep(interval)
            try:
                now = time.monotonic()
                for connection in list(self._connections):
                    if connection.idle_for(now) > self._idle_s:
                        connection.close_idle()
                client_errors.flush()
            except Exception:  # never let housekeeping die: idle connections would pile up
                log.exception("connection housekeeping failed")

    @property
    def connection_count(self) -> int:
        return len(self._tasks)

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        if self._housekeeping is not None:
            self._housekeeping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._housekeeping
            self._housekeeping = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None


def _peer(peer: object) -> str:
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
