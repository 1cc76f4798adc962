"""Cluster-wide producer ids: blocks of 1000 reserved in ``/latest_producer_id_block``.

Every broker answers InitProducerId, so ids must be unique across the cluster, not per data
dir: a broker reserves the next block with a conditional write of the znode (Kafka's
ZooKeeper-era ``ProducerIdManager`` layout), retrying on BadVersion, and hands out ids from it.
A crash loses the unused rest of a block, never reuses an id.
"""

from __future__ import annotations

import asyncio
import json

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from broker.cluster import znodes
from broker.cluster.zk_client import ZkClient

BLOCK_SIZE = 1000


def reserve_block(zk: KazooClient, broker_id: int) -> tuple[int, int]:
    """Reserves the next block; returns (first id, end exclusive). Blocking."""
    while True:
        try:
            raw, stat = zk.get(znodes.PRODUCER_ID_BLOCK)
        except NoNodeError:
            raw, stat = None, None
        start = int(json.loads(raw)["block_end"]) + 1 if raw else 0
        doc = {"version": 1, "broker": broker_id, "block_start": str(start),
               "block_end": str(start + BLOCK_SIZE - 1)}  # fmt: skip
        data = json.dumps(doc).encode()
        try:
            if stat is None:
                zk.create(znodes.PRODUCER_ID_BLOCK, data)
            else:
                zk.set(znodes.PRODUCER_ID_BLOCK, data, version=stat.version)
        except (BadVersionError, NodeExistsError):
            continue
        return start, start + BLOCK_SIZE


class ZkProducerIdAllocator:
    def __init__(self, zk: ZkClient, broker_id: int) -> None:
        self._zk = zk
        self._broker_id = broker_id
        self._next = 0
        self._end = 0
        self._lock = asyncio.Lock()

    async def allocate_async(self) -> int:
        async with self._lock:
            if self._next >= self._end:
                self._next, self._end = await self._zk.run(reserve_block, self._broker_id)
            pid = self._next
            self._next += 1
            return pid

    def allocate(self) -> int:
        raise RuntimeError("cluster producer ids are allocated with allocate_async()")
