"""Wake-ups for long-polling Fetch requests when a partition receives data.

A Fetch with ``min_bytes`` not yet available parks on the partitions it reads; Produce calls
:meth:`AppendNotifier.notify` after every successful append, which resolves the futures of all
fetches parked on that partition, so a consumer sees a record as soon as it is appended instead
of after ``max_wait_ms``. Everything runs on the event loop: a fetch reads the logs and parks
without an ``await`` in between, so no append can slip between its check and its wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

PartitionKey = tuple[str, int]


class AppendNotifier:
    """Per-partition sets of futures waiting for the next append."""

    def __init__(self) -> None:
        self._waiters: dict[PartitionKey, set[asyncio.Future[None]]] = {}

    def notify(self, topic: str, partition: int) -> None:
        """Wakes every fetch waiting on (topic, partition)."""
        waiters = self._waiters.pop((topic, partition), None)
        if waiters:
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)

    def notify_all(self) -> None:
        """Wakes every waiting fetch (shutdown, topic deletion)."""
        waiters, self._waiters = self._waiters, {}
        for futs in waiters.values():
            for fut in futs:
                if not fut.done():
                    fut.set_result(None)

    async def wait(
        self,
        keys: Iterable[PartitionKey],
        timeout: float,
        also: asyncio.Future[None] | None = None,
    ) -> bool:
        """Waits until one of the partitions gets an append, ``also`` resolves (the client
        hung up) or ``timeout`` seconds pass.

        Returns True if woken by an append. Cancellation-safe: the future is unregistered
        from every partition however the wait ends.
        """
        if timeout <= 0 or (also is not None and also.done()):
            return False
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        keys = list(keys)
        for key in keys:
            self._waiters.setdefault(key, set()).add(fut)
        try:
            waits = (fut,) if also is None else (fut, also)
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            return fut.done()
        finally:
            for key in keys:
                waiters = self._waiters.get(key)
                if waiters is not None:
                    waiters.discard(fut)
                    if not waiters:
                        del self._waiters[key]
            if not fut.done():
                fut.cancel()
