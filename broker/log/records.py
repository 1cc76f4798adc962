"""Decoding and building whole record batches, for the few places that must look inside one.

The hot path (produce, fetch) never comes here. The log cleaner, ListOffsets by timestamp, the
group coordinator's ``__consumer_offsets`` and tests do: they need keys, values and headers, and
must handle every compression codec a producer may use. kafka-python's record module does the v2
encoding and the gzip/snappy/lz4/zstd codecs (through ``python-snappy``, ``lz4`` and
``zstandard``, which are runtime dependencies for that reason: docs/decisions.md); this module
gives it a small, typed face.

Codec failures never escape as a library's own exception type: a codec whose library is missing
(or an unknown codec id) raises ``UnsupportedCompressionTypeError``, data a codec cannot
decompress raises ``CorruptRecordError``, and both messages name the codec, so a request handler
turns them into that partition's error code and background work into a per-partition failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from kafka import codec as _codec
from kafka.errors import UnsupportedCodecError
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from broker.errors import CorruptRecordError, UnsupportedCompressionTypeError
from broker.log.batch import NO_PRODUCER_ID, NO_SEQUENCE, BatchHeader, iter_batches

Header = tuple[str, bytes | None]

CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {CODEC_NONE: "none", CODEC_GZIP: "gzip", CODEC_SNAPPY: "snappy",
               CODEC_LZ4: "lz4", CODEC_ZSTD: "zstd"}  # fmt: skip
_AVAILABLE = {
    CODEC_NONE: lambda: True,
    CODEC_GZIP: _codec.has_gzip,
    CODEC_SNAPPY: _codec.has_snappy,
    CODEC_LZ4: _codec.has_lz4,
    CODEC_ZSTD: _codec.has_zstd,
}
_PACKAGES = {CODEC_SNAPPY: "python-snappy", CODEC_LZ4: "lz4", CODEC_ZSTD: "zstandard"}


def codec_name(codec: int) -> str:
    return CODEC_NAMES.get(codec, f"unknown codec id {codec}")


def missing_codecs() -> list[str]:
    """Names of the codecs this installation cannot decode (empty on a correct install)."""
    return [CODEC_NAMES[c] for c, available in _AVAILABLE.items() if not available()]


def check_codec(codec: int) -> None:
    """Raises UnsupportedCompressionTypeError unless ``codec`` can be decoded here."""
    available = _AVAILABLE.get(codec)
    if available is None:
        raise UnsupportedCompressionTypeError(
            f"record batch uses {codec_name(codec)}: Kafka defines 0-4 (none, gzip, snappy, "
            "lz4, zstd)"
        )
    if not available():
        raise UnsupportedCompressionTypeError(
            f"{codec_name(codec)} codec unavailable: its library is not installed; reinstall "
            f"sluice (it depends on {_PACKAGES.get(codec, 'it')})"
        )


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
    """Validates (CRC) and decodes every batch in ``buf``, decompressing as needed.

    Raises CorruptRecordError / UnsupportedCompressionTypeError (see the module docstring).
    """
    data = bytes(buf)
    for pos, header in iter_batches(data):
        records = _records(data[pos : pos + header.size], header)
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


def _records(raw: bytes, header: BatchHeader) -> list[Record]:
    codec = header.compression
    check_codec(codec)
    try:
        return [
            Record(r.offset, r.timestamp, r.key, r.value, tuple(r.headers))
            for r in DefaultRecordBatch(raw)
        ]
    except (UnsupportedCodecError, NotImplementedError) as exc:  # library vanished meanwhile
        raise UnsupportedCompressionTypeError(
            f"{codec_name(codec)} codec unavailable: {exc}"
        ) from exc
    except Exception as exc:  # each codec library raises its own types on bad input
        raise CorruptRecordError(
            f"cannot decode the {codec_name(codec)} batch at offsets {header.base_offset}-"
            f"{header.last_offset}: {type(exc).__name__}: {exc}"
        ) from exc


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
    ValueError for an empty record list: Kafka has no empty data batches, and
    UnsupportedCompressionTypeError if ``compression``'s library is missing.
    """
    items = list(records)
    if not items:
        raise ValueError("a record batch needs at least one record")
    check_codec(compression)
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
