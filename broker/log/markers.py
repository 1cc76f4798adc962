"""Transaction markers: the control batches that end a transaction in each of its partitions.

A marker is a v2 record batch with the *transactional* and *control* attribute bits set, the
transaction's producer id and epoch, base sequence -1 and exactly one uncompressed record
whose key and value use Kafka's ``EndTransactionMarker`` layout (big-endian)::

    key    version:int16 (0)   type:int16 (0 = ABORT, 1 = COMMIT)
    value  version:int16 (0)   coordinator_epoch:int32

Only the transaction coordinator writes markers (``PartitionLog.append_marker``); a client's
produce request carrying a control batch is refused. Consumers skip control batches; the
log reads the type when it replays batch headers (recovery, followers), which costs one small
``pread`` per marker: markers are never compressed, so the record sits right after the
61-byte header. A marker some other writer compressed is decoded the slow way.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from crc32c import crc32c

from broker.errors import CorruptRecordError
from broker.log.batch import (
    ATTR_COMPRESSION_MASK,
    ATTR_CONTROL,
    ATTR_TRANSACTIONAL,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    NO_SEQUENCE,
)

ABORT = 0
COMMIT = 1
MARKER_VERSION = 0

_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")
_HEADER = struct.Struct(">qiibIhiqqqhii")
# Enough bytes after the header for the whole marker record (16 bytes as Kafka writes it).
MARKER_PEEK = HEADER_SIZE + 24


class Marker(NamedTuple):
    """What a control record says: commit or abort, and by which coordinator epoch."""

    commit: bool
    coordinator_epoch: int


def _varint(value: int) -> bytes:
    """Zigzag varint (Kafka's record encoding); only small values occur here."""
    zz = (value << 1) ^ (value >> 63)
    out = bytearray()
    while zz >= 0x80:
        out.append((zz & 0x7F) | 0x80)
        zz >>= 7
    out.append(zz)
    return bytes(out)


def build_marker(
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
    timestamp: int,
) -> bytes:
    """One control batch (base offset 0: the log assigns the real one)."""
    key = _KEY.pack(MARKER_VERSION, COMMIT if commit else ABORT)
    value = _VALUE.pack(MARKER_VERSION, coordinator_epoch)
    body = (
        b"\x00"  # record attributes
        + _varint(0)  # timestamp delta
        + _varint(0)  # offset delta
        + _varint(len(key))
        + key
        + _varint(len(value))
        + value
        + _varint(0)  # headers
    )
    record = _varint(len(body)) + body
    size = HEADER_SIZE + len(record)
    header = bytearray(
        _HEADER.pack(
            0,  # base offset
            size - LOG_OVERHEAD,
            -1,  # partition leader epoch (the log stamps it)
            MAGIC,
            0,  # crc, below
            ATTR_TRANSACTIONAL | ATTR_CONTROL,
            0,  # last offset delta
            timestamp,
            timestamp,
            producer_id,
            producer_epoch,
            NO_SEQUENCE,
            1,
        )
    )
    data = header + record
    struct.pack_into(">I", data, 17, crc32c(memoryview(data)[21:]))
    return bytes(data)


def _read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise CorruptRecordError("control record ends inside a varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7


def read_marker(batch: bytes | memoryview) -> Marker:
    """The marker in a control batch (``batch`` starts at its header).

    Raises CorruptRecordError if the record cannot be read. Needs at least ``MARKER_PEEK``
    bytes for an uncompressed marker; a compressed one must be passed whole.
    """
    attributes = struct.unpack_from(">h", batch, 21)[0]
    if attributes & ATTR_COMPRESSION_MASK:
        from broker.log.records import decode_batches

        record = next(decode_batches(batch)).records[0]
        key, value = record.key, record.value
    else:
        pos = HEADER_SIZE
        _, pos = _read_varint(batch, pos)  # record length
        pos += 1  # attributes
        _, pos = _read_varint(batch, pos)  # timestamp delta
        _, pos = _read_varint(batch, pos)  # offset delta
        key_len, pos = _read_varint(batch, pos)
        key = bytes(batch[pos : pos + key_len]) if key_len >= 0 else None
        pos += max(key_len, 0)
        value = None
        if pos < len(batch):
            value_len, pos = _read_varint(batch, pos)
            if value_len >= 0 and pos + value_len <= len(batch):
                value = bytes(batch[pos : pos + value_len])
    if key is None or len(key) < _KEY.size:
        raise CorruptRecordError("control record without a marker key")
    _, kind = _KEY.unpack_from(key)
    coordinator_epoch = -1
    if value is not None and len(value) >= _VALUE.size:
        coordinator_epoch = _VALUE.unpack_from(value)[1]
    if kind not in (ABORT, COMMIT):
        raise CorruptRecordError(f"control record of unknown type {kind}")
    return Marker(kind == COMMIT, coordinator_epoch)
