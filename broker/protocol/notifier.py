"""Wake-ups for long-polling Fetch requests when a partition receives data.

A Fetch with ``min_bytes`` not yet available parks on the partitions it reads; Produce calls
:meth:`AppendNotifier.notify` after every successful append, which resolves the futures of all
fetches parked on that partition, so a consumer sees a record as soon as it is appended instead
of after ``max_wait_ms``. Everything runs on the event loop: a fetch reads the logs and parks
without an ``await`` in between, so no append can slip between its check and its wait.

Cluster mode has two kinds of readers with different bounds, so they park apart: followers
(``replica=True``) read to the log end, consumers only to the high watermark. A leader append
that does not move the high watermark (acks=all, followers still to copy it) wakes only the
followers (:meth:`notify_log_end`); the follower fetch that then moves the high watermark wakes
only the consumers (:meth:`notify_high_watermark`). Waking the other kind would find nothing
new to read and park it again, which at ten thousand produces a second cost the leader a
measurable share of its CPU (docs/cluster.md, Latency).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

PartitionKey = tuple[str, int]
_Waiters = dict[PartitionKey, set[asyncio.Future[None]]]


class AppendNotifier:
    """Per-partition sets of futures waiting for the next append, consumers and followers
    apart."""

    def __init__(self) -> None:
        self._consumers: _Waiters = {}
        self._replicas: _Waiters = {}

    def notify(self, topic: str, partition: int) -> None:
        """Wakes every fetch waiting on (topic, partition): new data for everyone, or a state
        change (leadership) every reader must see."""
        self.notify_high_watermark(topic, partition)
        self.notify_log_end(topic, partition)

    def notify_high_watermark(self, topic: str, partition: int) -> None:
        """Wakes the consumers' fetches: the high watermark moved."""
        _wake(self._consumers.pop((topic, partition), None))

    def notify_log_end(self, topic: str, partition: int) -> None:
        """Wakes the followers' fetches: the log end moved (a leader append)."""
        _wake(self._replicas.pop((topic, partition), None))

    def notify_all(self) -> None:
        """Wakes every waiting fetch (shutdown, topic deletion)."""
        for table in (self._consumers, self._replicas):
            waiting = list(table.values())
            table.clear()
            for futs in waiting:
                _wake(futs)

    async def wait(
        self,
        keys: Iterable[PartitionKey],
        timeout: float,
        also: asyncio.Future[None] | None = None,
        *,
        replica: bool = False,
    ) -> bool:
        """Waits until one of the partitions has news for this kind of reader (``replica``:
        a follower), ``also`` resolves (the client hung up) or ``timeout`` seconds pass.

        Returns True if woken by a notification. Cancellation-safe: the future is unregistered
        from every partition however the wait ends.
        """
        if timeout <= 0 or (also is not None and also.done()):
            return False
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        table = self._replicas if replica else self._consumers
        keys = list(keys)
        for key in keys:
            table.setdefault(key, set()).add(fut)
        try:
            waits = (fut,) if also is None else (fut, also)
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            return fut.done()
        finally:
            for key in keys:
                waiters = table.get(key)
                if waiters is not None:
                    waiters.discard(fut)
                    if not waiters:
                        del table[key]
            if not fut.done():
                fut.cancel()


def _wake(futs: set[asyncio.Future[None]] | None) -> None:
    if futs:
        for fut in futs:
            if not fut.done():
                fut.set_result(None)
