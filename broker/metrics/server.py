"""The metrics port: ``GET /metrics`` (Prometheus text format) and ``GET /ready`` (readiness).

A small HTTP/1.1 responder on the broker's own event loop rather than prometheus_client's
threaded server: the collector then reads loop-owned state (logs, groups, replication) without
locks or races, and concurrent scrapes are simply served one after another. Each answer closes
its connection (``Connection: close``), which every scraper and probe handles. Requests are
bounded (8 KiB of head, 10 s to send it), so a stray client cannot hold memory or a task.

Plain HTTP without authentication, like Kafka's JMX exporter: it reveals topic, group and
partition names, so it binds the broker's host (loopback by default) and is off unless
``metrics.port`` is set (docs/metrics.md, Security).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

log = logging.getLogger(__name__)

_MAX_HEAD = 8192
_HEAD_TIMEOUT_S = 10.0
_REASONS = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 400: "Bad Request",
            503: "Service Unavailable"}  # fmt: skip


class MetricsServer:
    """Serves one ``CollectorRegistry`` and a readiness predicate on (host, port)."""

    def __init__(
        self, registry: CollectorRegistry, ready: Callable[[], bool], host: str, port: int
    ) -> None:
        self._registry = registry
        self._ready = ready
        self._host = host
        self._port = port
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> tuple[str, int]:
        self._server = await asyncio.start_server(
            self._serve, self._host, self._port, reuse_address=True, limit=_MAX_HEAD
        )
        name = self._server.sockets[0].getsockname()
        return name[0], name[1]

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            status, content_type, body = await self._answer(reader)
            head = (
                f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode("ascii") + body)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[int, str, bytes]:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT_S)
        except asyncio.LimitOverrunError:
            return 400, "text/plain", b"request head too large\n"
        parts = head.split(b"\r\n", 1)[0].split()
        if len(parts) != 3:
            return 400, "text/plain", b"bad request line\n"
        method, target = parts[0], parts[1].split(b"?", 1)[0]
        if method not in (b"GET", b"HEAD"):
            return 405, "text/plain", b"GET only\n"
        body: bytes
        if target == b"/metrics":
            status, content_type, body = 200, CONTENT_TYPE_LATEST, generate_latest(self._registry)
        elif target in (b"/ready", b"/health"):
            ready = self._ready()
            status, content_type = (200 if ready else 503), "text/plain"
            body = b"ready\n" if ready else b"not ready\n"
        else:
            return 404, "text/plain", b"try /metrics or /ready\n"
        return status, content_type, b"" if method == b"HEAD" else body
