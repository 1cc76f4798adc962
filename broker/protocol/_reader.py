"""``ClientReader``: the StreamReader under each connection, with hang-up, activity and
read-ahead control.

Hang-up: a connection reads its next frame only after answering the current one, so a client
that disconnects during a long-poll Fetch would go unnoticed until ``max_wait`` ends. The
protocol feeds EOF (or the error) here as soon as it happens; ``hung_up`` resolves then, and
the fetch answers at once (answering early is always allowed).

Activity: ``last_active`` is the monotonic time of the last bytes received; the server closes
connections idle beyond ``connections.max.idle.ms`` from it.

Read-ahead: asyncio's StreamReader stops reading the socket (``pause_reading``) once more than
twice its ``limit`` is buffered and nobody consumes it, and resumes when a read waits for data.
Between requests the limit is small (``IDLE_READ_AHEAD``): a connection whose request is not
being read holds at most ~2x that (plus one socket read) in memory, however much its client
sends; the rest waits in the kernel, and TCP pushes back on the sender. While a request body
whose size was reserved (``limits.QueuedBytes``) is read, the limit is large
(``BODY_READ_AHEAD``), so a 1 MiB produce request arrives without pausing the socket over and
over. The limit is StreamReader's ``_limit`` attribute, which its ``feed_data`` compares
against; this subclass is the one place that relies on it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import SupportsIndex

IDLE_READ_AHEAD = 64 * 1024
BODY_READ_AHEAD = 4 << 20


class ClientReader(asyncio.StreamReader):
    """A StreamReader that tells when the client hung up and when it last sent anything."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=IDLE_READ_AHEAD, loop=loop)
        self.hung_up: asyncio.Future[None] = loop.create_future()
        self.last_active = time.monotonic()

    def set_read_ahead(self, nbytes: int) -> None:
        """How much may be buffered unread before the socket is paused (see module doc)."""
        self._limit = nbytes

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        self.last_active = time.monotonic()
        super().feed_data(data)

    def _hang_up(self) -> None:
        if not self.hung_up.done():
            self.hung_up.set_result(None)

    def feed_eof(self) -> None:
        super().feed_eof()
        self._hang_up()

    def set_exception(self, exc: Exception) -> None:
        super().set_exception(exc)
        self._hang_up()
