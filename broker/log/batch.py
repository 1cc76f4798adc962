"""Kafka record batches (magic v2) as stored bytes: header access, validation, offset rewrite.

On-disk and on-wire layout of one batch (big-endian), 61-byte header then the records::

    offset  size  field
         0     8  baseOffset              rewritten by the broker on append
         8     4  batchLength             bytes after this field (total size = batchLength + 12)
        12     4  partitionLeaderEpoch    rewritten by the broker on append
        16     1  magic                   must be 2
        17     4  crc                     CRC-32C of bytes [21, end)
        21     2  attributes              bits 0-2 codec, 3 timestamp type, 4 txn, 5 control
        23     4  lastOffsetDelta
        27     8  baseTimestamp
        35     8  maxTimestamp
        43     8  producerId
        51     2  producerEpoch
        53     4  baseSequence
        57     4  recordCount
        61     -  records (possibly compressed)

The CRC does not cover baseOffset or partitionLeaderEpoch, which is why the broker can assign
offsets without recomputing it and without ever decoding the records: the hot path is
``parse header -> check magic/length/CRC -> rewrite 12 bytes -> append``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from crc32c import crc32c

from broker.errors import CorruptRecordError, InvalidRecordError

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the part of a batch not counted by batchLength
MAGIC = 2

_HEADER = struct.Struct(">qiibIhiqqqhii")
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")

ATTR_COMPRESSION_MASK = 0x07
MAX_CODEC = 4  # zstd; 5-7 are undefined
ATTR_TIMESTAMP_TYPE = 0x08  # set = LogAppendTime
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40

NO_PRODUCER_ID = -1
NO_SEQUENCE = -1


class BatchHeader(NamedTuple):
    """The decoded 61-byte header of one v2 record batch.

    Immutable like a frozen dataclass, but a NamedTuple: it is built once per batch on the
    produce path, and ``_make`` from ``struct.unpack`` costs a tenth of a dataclass ``__init__``.
    """

    base_offset: int
    batch_length: int
    leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        """Total bytes of the batch, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def compression(self) -> int:
        """0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd."""
        return self.attributes & ATTR_COMPRESSION_MASK

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF


def read_header(buf: bytes | memoryview, pos: int = 0) -> BatchHeader:
    """Decodes the header at ``buf[pos:]``; raises CorruptRecordError if it is cut short."""
    if len(buf) - pos < HEADER_SIZE:
        raise CorruptRecordError(
            f"record batch header truncated: {len(buf) - pos} of {HEADER_SIZE} bytes"
        )
    return BatchHeader._make(_HEADER.unpack_from(buf, pos))


def peek_size(buf: bytes | memoryview, pos: int = 0) -> int | None:
    """Total size of the batch starting at ``pos`` from its first 12 bytes, or None if cut."""
    if len(buf) - pos < LOG_OVERHEAD:
        return None
    _, length = _OFFSET_AND_LENGTH.unpack_from(buf, pos)
    return int(length) + LOG_OVERHEAD


def validate(buf: bytes | memoryview, pos: int = 0) -> BatchHeader:
    """Checks one batch at ``buf[pos:]`` is complete, magic v2 and CRC-correct.

    Raises CorruptRecordError (truncated, bad magic, bad CRC, impossible length) or
    InvalidRecordError (well-formed but unacceptable, e.g. zero records). Does not look at
    the records themselves: that is the point.
    """
    header = read_header(buf, pos)
    if header.magic != MAGIC:
        raise CorruptRecordError(f"unsupported record batch magic {header.magic}; expected 2")
    if header.batch_length < HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptRecordError(f"record batch length {header.batch_length} is too small")
    end = pos + header.size
    if end > len(buf):
        raise CorruptRecordError(
            f"record batch truncated: header says {header.size} bytes, {len(buf) - pos} present"
        )
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    actual = crc32c(view[pos + 21 : end])
    if actual != header.crc:
        raise CorruptRecordError(
            f"record batch CRC mismatch: stored {header.crc:#010x}, computed {actual:#010x}"
        )
    if header.record_count < 0 or header.last_offset_delta < 0:
        raise InvalidRecordError("record batch has a negative record count or offset delta")
    return header


def iter_batches(buf: bytes | memoryview) -> Iterator[tuple[int, BatchHeader]]:
    """Validates and yields ``(position, header)`` for each batch in a buffer of whole batches.

    Raises on the first bad or partial batch, so a caller appending a producer's records field
    can reject the whole request before writing anything. A codec id outside Kafka's 0-4 is
    corrupt here (the produce path); recovery, which calls ``validate``, does not judge codecs,
    so data already stored is never truncated for it.
    """
    pos = 0
    while pos < len(buf):
        header = validate(buf, pos)
        if header.attributes & ATTR_COMPRESSION_MASK > MAX_CODEC:
            raise CorruptRecordError(
                f"record batch uses unknown compression codec id "
                f"{header.attributes & ATTR_COMPRESSION_MASK}; Kafka defines 0-4"
            )
        yield pos, header
        pos += header.size


def set_base_offset(buf: bytearray | memoryview, pos: int, base_offset: int) -> None:
    """Rewrites baseOffset in place (outside the CRC, so the CRC stays valid)."""
    _BASE_OFFSET.pack_into(buf, pos, base_offset)


def set_leader_epoch(buf: bytearray | memoryview, pos: int, epoch: int) -> None:
    """Rewrites partitionLeaderEpoch in place (outside the CRC)."""
    _LEADER_EPOCH.pack_into(buf, pos + 12, epoch)
