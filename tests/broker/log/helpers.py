"""Building real v2 record batches for log tests (kafka-python's producer-side builder)."""

from __future__ import annotations

from collections.abc import Sequence

from broker.log.records import CODEC_NONE, Record, build_batch


def make_batch(
    values: Sequence[bytes | None],
    *,
    keys: Sequence[bytes | None] | None = None,
    timestamp: int = 1_000,
    compression: int = CODEC_NONE,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
) -> bytes:
    """One batch of ``values`` (offset deltas 0..n-1), all stamped ``timestamp``."""
    keys = keys if keys is not None else [None] * len(values)
    records = [
        Record(i, timestamp, k, v) for i, (k, v) in enumerate(zip(keys, values, strict=True))
    ]
    return build_batch(
        records,
        base_offset=0,
        compression=compression,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
    )


def values_of(chunks: Sequence[bytes | memoryview]) -> list[tuple[int, bytes | None]]:
    """(offset, value) of every record in a read result."""
    from broker.log.records import decode_batches

    out = []
    for chunk in chunks:
        for batch in decode_batches(chunk):
            out.extend((r.offset, r.value) for r in batch.records)
    return out
