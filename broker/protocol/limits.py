"""What bounds the broker's network side: connection counts and bytes of incomplete requests.

Kafka's broker settings, with Kafka's meaning (``BrokerConfig`` holds them):

- ``max.connections`` / ``max.connections.per.ip`` (+ ``max.connections.per.ip.overrides``):
  ``ConnectionQuotas``. A connection beyond a limit is closed as soon as it is accepted; the
  connections already open are not touched. (Kafka's acceptor instead *waits* for a free
  slot when the broker-wide limit is reached; closing gives the client the same signal
  sooner, and it reconnects with its backoff.)
- ``queued.max.request.bytes``: ``QueuedBytes``, Kafka's memory pool idea. Before a connection
  reads the body of a request it reserves the request's declared size; while the reservations
  of all connections are at the limit, it waits (first come, first served) and reads nothing,
  so the client's bytes stay in the kernel and TCP pushes back on the sender. As in Kafka's
  pool, a reservation is granted whenever *any* room is left, so one request may exceed the
  remainder and requests never deadlock on partial reservations; the bytes held for requests
  therefore stay below the limit plus one request. The reservation is released once the
  request was answered. A declared size only reserves: memory is allocated as bytes arrive.
- ``connections.max.idle.ms``: enforced by the server's housekeeping task (``server.py``); a
  connection waiting for its client's bytes for longer is closed.

Thread safety: none needed; everything here runs on the event loop.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections import Counter, deque
from collections.abc import Mapping


class QueuedBytes:
    """Reservations of request bytes against ``queued.max.request.bytes``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit if limit > 0 else None  # Kafka: -1 (any value <= 0) = unbounded
        self.reserved = 0
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()

    def try_reserve(self, nbytes: int) -> bool:
        """Reserves at once if room is left and nobody waits (no overtaking)."""
        if self.limit is None or (not self._waiters and self.reserved < self.limit):
            self.reserved += nbytes
            return True
        return False

    async def reserve(self, nbytes: int) -> None:
        """Reserves ``nbytes``, waiting in line for room; pair with ``release``."""
        if self.try_reserve(nbytes):
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (nbytes, future)
        self._waiters.append(entry)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(nbytes)  # granted just as we were cancelled: give it back
            else:
                self._waiters.remove(entry)
            raise

    def release(self, nbytes: int) -> None:
        self.reserved -= nbytes
        waiters = self._waiters
        while waiters and self.limit is not None and self.reserved < self.limit:
            nbytes, future = waiters.popleft()
            if not future.done():
                self.reserved += nbytes
                future.set_result(None)

    @property
    def waiting(self) -> int:
        """Connections waiting for room."""
        return len(self._waiters)


class ConnectionQuotas:
    """Counts open connections, per client address and in total."""

    def __init__(self, max_total: int, max_per_ip: int, overrides: Mapping[str, int]) -> None:
        self.max_total = max_total
        self.max_per_ip = max_per_ip
        self._overrides = dict(overrides)  # by IP address (resolve with ``resolve_overrides``)
        self._per_ip: Counter[str] = Counter()
        self.total = 0

    def admit(self, ip: str) -> str | None:
        """Counts the connection in and returns None, or returns why it must be closed."""
        limit = self._overrides.get(ip, self.max_per_ip)
        if self._per_ip[ip] >= limit:
            return f"address already has the configured maximum of {limit} connections"
        if self.total >= self.max_total:
            return f"broker already has the configured maximum of {self.max_total} connections"
        self._per_ip[ip] += 1
        self.total += 1
        return None

    def release(self, ip: str) -> None:
        self.total -= 1
        self._per_ip[ip] -= 1
        if self._per_ip[ip] <= 0:
            del self._per_ip[ip]

    def count(self, ip: str) -> int:
        return self._per_ip[ip]


def parse_overrides(text: str) -> dict[str, int]:
    """Kafka's ``max.connections.per.ip.overrides`` format: ``host:count,host:count``.

    Raises ValueError naming the bad entry. IPv6 addresses may be bracketed or bare (the last
    colon separates the count).
    """
    result: dict[str, int] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, sep, count = item.rpartition(":")
        host = host.strip().strip("[]")
        if not sep or not host or not count.strip().isdigit():
            raise ValueError(
                f"max.connections.per.ip.overrides: {item!r} is not host:count "
                "(e.g. 127.0.0.1:200,hostA:100)"
            )
        result[host] = int(count)
    return result


def resolve_overrides(overrides: Mapping[str, int]) -> dict[str, int]:
    """Host names -> IP addresses (each address of a name gets its count), as Kafka resolves
    them once at start. Raises ValueError for a name that does not resolve."""
    resolved: dict[str, int] = {}
    for host, count in overrides.items():
        try:
            resolved[str(ipaddress.ip_address(host))] = count
            continue
        except ValueError:
            pass
        try:
            infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise ValueError(
                f"max.connections.per.ip.overrides: cannot resolve {host!r}: {exc}"
            ) from exc
        for info in infos:
            resolved[str(info[4][0])] = count
    return resolved
