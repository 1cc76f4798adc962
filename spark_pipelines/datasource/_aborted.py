"""read_committed on the native fetch path: dropping the batches of aborted transactions.

A ``read_committed`` Fetch response lists, per partition, the aborted transactions (producer
id, first offset) with data in the returned range; the consumer must drop those producers'
transactional batches up to each one's abort marker. Kafka's consumers do it per batch, and
so does this: one look at each batch header (producer id, attributes), nothing per record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spark_pipelines.datasource._fetch import Scanned


def aborted_batches(dec: Any, scanned: Scanned, aborted: Any) -> np.ndarray:
    """Which readable batches belong to an aborted transaction (Kafka's consumer rule): walking
    batches in order, a producer joins the aborted set once an aborted transaction of it starts
    at or before the batch's last offset, its transactional batches are dropped while it is in
    the set, and its next control batch (the abort marker) takes it out."""
    drop = np.zeros(len(scanned.table), np.bool_)
    pending = sorted((int(t.first_offset), int(t.producer_id)) for t in aborted)
    active: set[int] = set()
    j = 0
    records = scanned.records
    for i in range(len(scanned.table)):
        while j < len(pending) and pending[j][0] <= scanned.lasts[i]:
            active.add(pending[j][1])
            j += 1
        if not active:
            continue
        head = int(scanned.table[i, dec.SEC_START]) - dec.HEADER_SIZE
        pid = int.from_bytes(records[head + 43 : head + 51], "big", signed=True)
        if scanned.attrs[i] & dec.CONTROL:
            active.discard(pid)
        elif scanned.attrs[i] & dec.TRANSACTIONAL and pid in active:
            drop[i] = True
    return drop
