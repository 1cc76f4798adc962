"""Decoding and building whole record batches, for the few places that must look inside one.

The hot path (produce, fetch) never comes here. The log cleaner, the group coordinator's
``__consumer_offsets`` and tests do: they need keys, values and headers, and must handle every
compression codec a producer may use. kafka-python's record module does the v2 encoding and the
gzip/snappy/lz4/zstd codecs; this module gives it a small, typed face.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from broker.log.batch import NO_PRODUCER_ID, NO_SEQUENCE, iter_batches

Header = tuple[str, bytes | None]

CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD = 0, 1, 2, 3, 4


@dataclass(frozen=True, slots=True)
class Record:
    """One decoded record with its absolute offset."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[Header] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class DecodedBatch:
    """A batch's header fields that the cleaner must keep, plus its records."""

    base_offset: int
    last_offset: int
    compression: int
    timestamp_type: int
    is_transactional: bool
    is_control: bool
    producer_id: int
    producer_epoch: int
    base_sequence: int
    max_timestamp: int
    records: list[Record]


def decode_batches(buf: bytes | memoryview) -> Iterator[DecodedBatch]:
    """Validates (CRC) and decodes every batch in ``buf``, decompressing as needed."""
    data = bytes(buf)
    for pos, header in iter_batches(data):
        raw = DefaultRecordBatch(data[pos : pos + header.size])
        records = [Record(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in raw]
        yield DecodedBatch(
            base_offset=header.base_offset,
            last_offset=header.last_offset,
            compression=header.compression,
            timestamp_type=1 if header.attributes & 0x08 else 0,
            is_transactional=header.is_transactional,
            is_control=header.is_control,
            producer_id=header.producer_id,
            producer_epoch=header.producer_epoch,
            base_sequence=header.base_sequence,
            max_timestamp=header.max_timestamp,
            records=records,
        )


def build_batch(
    records: Iterable[Record],
    *,
    base_offset: int | None = None,
    compression: int = CODEC_NONE,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
) -> bytes:
    """Encodes records into one v2 batch.

    Offsets are stored as deltas from ``base_offset`` (default: the first record's offset), so
    a compacted batch with gaps keeps every surviving record's original offset. Raises
    ValueError for an empty record list: Kafka has no empty data batches.
    """
    items = list(records)
    if not items:
        raise ValueError("a record batch needs at least one record")
    base = items[0].offset if base_offset is None else base_offset
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=is_transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 62,
    )
    for rec in items:
        builder.append(
            rec.offset - base,
            timestamp=rec.timestamp,
            key=rec.key,
            value=rec.value,
            headers=list(rec.headers),
        )
    out = bytearray(builder.build())
    out[0:8] = base.to_bytes(8, "big", signed=True)
    return bytes(out)
