"""Decoded records as Arrow: the buffers ``_decode`` fills, and the codecs it needs.

Kept apart from ``_decode`` so nothing here needs numba: :class:`Columns` is the decoder's
output in Arrow's own layout (values gathered into one buffer with int32 start offsets and a
validity flag per entry), :func:`to_arrow` wraps those buffers as the Kafka-source columns
without copying them, and :func:`decompress` inflates a compressed records section.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cramjam
import numpy as np
import pyarrow as pa

_XERIAL_MAGIC = b"\x82SNAPPY\x00"


def decompress(codec: int, payload: bytes | memoryview) -> Any:
    """A compressed records section inflated by cramjam (a buffer); None for unknown codecs.

    Snappy comes in two shapes: librdkafka writes a raw snappy block, Kafka's Java producer
    writes xerial's stream framing (a 16-byte header ``\\x82SNAPPY\\x00`` + version + minimum
    compatible version, then blocks of big-endian int32 length + raw snappy block).
    """
    if codec == 1:
        return cramjam.gzip.decompress(payload)
    if codec == 2:
        view = memoryview(payload)
        if bytes(view[:8]) == _XERIAL_MAGIC:
            return _xerial(view)
        return cramjam.snappy.decompress_raw(payload)
    if codec == 3:
        return cramjam.lz4.decompress(payload)
    if codec == 4:
        return cramjam.zstd.decompress(payload)
    return None


def _xerial(view: memoryview) -> bytes:
    parts = []
    pos = 16
    while pos + 4 <= len(view):
        size = int.from_bytes(view[pos : pos + 4], "big")
        pos += 4
        parts.append(bytes(cramjam.snappy.decompress_raw(view[pos : pos + size])))
        pos += size
    return b"".join(parts)


@dataclass(frozen=True)
class Columns:
    """Decoded records as Arrow-layout buffers (see ``_decode.decode_into``)."""

    offsets: np.ndarray
    timestamps: np.ndarray
    timestamp_types: np.ndarray
    key_offsets: np.ndarray
    key_valid: np.ndarray
    key_data: np.ndarray
    value_offsets: np.ndarray
    value_valid: np.ndarray
    value_data: np.ndarray
    header_offsets: np.ndarray
    hkey_offsets: np.ndarray
    hkey_data: np.ndarray
    hvalue_offsets: np.ndarray
    hvalue_valid: np.ndarray
    hvalue_data: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets)


def _validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    nulls = len(valid) - int(np.count_nonzero(valid))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(valid, bitorder="little")), nulls


def binary_array(
    type_: pa.DataType, offsets: np.ndarray, valid: np.ndarray, data: np.ndarray, lo: int, hi: int
) -> pa.Array:
    """Entries ``lo:hi`` of a binary/string column of decode's buffers, as a compact array.

    Compact: the offsets start at 0 and the data buffer is exactly the entries' bytes (a view,
    not a copy). A slice of a bigger array would carry the whole buffers along, and Arrow IPC,
    which PySpark uses to hand batches to the JVM, then writes more than the rows hold.
    """
    window = offsets[lo : hi + 1]
    first = int(window[0])
    bitmap, nulls = _validity(valid[lo:hi])
    return pa.Array.from_buffers(
        type_,
        hi - lo,
        [bitmap, pa.py_buffer(window - first), pa.py_buffer(data[first : int(window[-1])])],
        null_count=nulls,
    )


def to_arrow(
    cols: Columns, topic: str, partition: int, schema: pa.Schema, lo: int = 0, hi: int = -1
) -> pa.RecordBatch:
    """The Kafka-source columns (``_kafka.ARROW_SCHEMA``) of decoded records ``lo:hi``.

    Matches ``_kafka._batch`` value for value: a key or value of length -1 is null, empty is
    empty; a record without headers has null ``headers``; a negative timestamp is null;
    ``timestampType`` is 0 (CreateTime) or 1 (LogAppendTime). Every array is compact (see
    :func:`binary_array`); fixed-width columns are views of decode's arrays. Raises
    ``pa.ArrowInvalid`` if a header key is not UTF-8 (the caller falls back; confluent-kafka
    decides what that gives).
    """
    hi = len(cols) if hi < 0 else hi
    n = hi - lo
    header_type = schema.field("headers").type
    stamps = cols.timestamps[lo:hi]
    ts_bitmap, ts_nulls = _validity(stamps >= 0)
    timestamps = pa.Array.from_buffers(
        pa.timestamp("us", tz="UTC"), n, [ts_bitmap, pa.py_buffer(stamps * 1000)],
        null_count=ts_nulls,
    )  # fmt: skip
    h_lo, h_hi = int(cols.header_offsets[lo]), int(cols.header_offsets[hi])
    if h_hi == h_lo:
        headers = pa.nulls(n, header_type)
    else:
        hkeys = binary_array(
            pa.string(),
            cols.hkey_offsets,
            np.ones(len(cols.hkey_offsets) - 1, np.bool_),
            cols.hkey_data,
            h_lo,
            h_hi,
        )
        hkeys.validate(full=True)  # UTF-8
        hvalues = binary_array(
            pa.binary(), cols.hvalue_offsets, cols.hvalue_valid, cols.hvalue_data, h_lo, h_hi
        )
        entries = pa.StructArray.from_arrays([hkeys, hvalues], fields=list(header_type.value_type))
        list_offsets = cols.header_offsets[lo : hi + 1] - h_lo
        bitmap, nulls = _validity(np.diff(list_offsets) > 0)
        headers = pa.Array.from_buffers(
            header_type,
            n,
            [bitmap, pa.py_buffer(list_offsets)],
            null_count=nulls,
            children=[entries],
        )
    keys = (
        pa.nulls(n, pa.binary())
        if not cols.key_valid[lo:hi].any()
        else binary_array(pa.binary(), cols.key_offsets, cols.key_valid, cols.key_data, lo, hi)
    )
    arrays = [
        keys,
        binary_array(pa.binary(), cols.value_offsets, cols.value_valid, cols.value_data, lo, hi),
        pa.repeat(pa.scalar(topic, pa.string()), n),
        pa.repeat(pa.scalar(partition, pa.int32()), n),
        pa.array(cols.offsets[lo:hi], pa.int64()),
        timestamps,
        pa.array(cols.timestamp_types[lo:hi], pa.int32()),
        headers,
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
