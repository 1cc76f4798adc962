"""Message sets of magic 0 and 1 (Kafka before 0.11) to and from record batches of magic 2.

The log stores magic v2 batches only. Produce v0-v2 carry message sets of magic 0/1 and Fetch
v0-v3 clients can read nothing else, so, as Kafka does with ``message.format.version`` at v2,
the broker converts at the edge:

- :func:`up_convert` (produce): every message of the set, compressed wrappers unpacked, becomes
  one record of a single v2 batch, in order, with the message's timestamp (magic 1) or none
  (-1, magic 0), keeping the producer's codec (``compression.type=producer``). The log then
  assigns offsets and, for ``LogAppendTime`` topics, the timestamp, as for any batch. CRCs (the
  wrapper's and each inner message's) are checked first: a corrupt set is refused whole.
- :func:`down_convert` (fetch): the records at or past the fetch offset, keeping their offsets,
  become messages of the client's magic. An uncompressed batch gives one message per record; a
  compressed one gives one wrapper message of the same codec whose inner messages carry offsets
  relative to the batch's first record (magic 1, KIP-31) or absolute ones (magic 0), the
  wrapper's offset being the last record's. Control batches (transaction markers) and record
  headers have no v0/v1 form and are left out, as Kafka does. zstd has no v0/v1 form either:
  :class:`UnsupportedCompressionTypeError` (Kafka answers the partition with that error).

Layout of one message (big-endian), after the log entry's ``offset int64`` and ``size int32``::

    crc uint32       CRC-32 (IEEE) of everything after it
    magic int8       0 or 1
    attributes int8  bits 0-2 codec (1 gzip, 2 snappy, 3 lz4), bit 3 LogAppendTime (magic 1)
    timestamp int64  magic 1 only
    key bytes        int32 length (-1 = null) + data
    value bytes      int32 length (-1 = null) + data; a wrapper's value is the compressed set

Both directions decode every record in Python and run off the event loop (the handlers call
them in an executor). Old clients pay that cost; v3+ produce and v4+ fetch never come here.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence

from kafka.codec import gzip_encode, lz4_encode, lz4_encode_old_kafka, snappy_encode
from kafka.record.legacy_records import LegacyRecordBatch

from broker.errors import (
    CorruptRecordError,
    InvalidRecordError,
    InvalidTimestampError,
    UnsupportedCompressionTypeError,
)
from broker.log.batch import MAGIC, iter_batches
from broker.log.records import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    Record,
    build_batch,
    decode_batches,
)

_ENTRY = struct.Struct(">qi")  # offset, size
_ENTRY_SIZE = _ENTRY.size
_MAGIC_AT = _ENTRY_SIZE + 4  # the magic byte follows the crc in v0/v1 and in v2 batches
_MIN_MESSAGE = 14  # crc, magic, attributes and two null lengths (magic 0)
_LENGTH = struct.Struct(">i")
_ATTR_CODEC = 0x07
_ATTR_LOG_APPEND_TIME = 0x08
_GZIP_LEVEL = 6  # Kafka's default gzip level


def up_convert(message_set: bytes | memoryview) -> bytes:
    """One v2 batch with every message of a magic 0/1 message set, offsets 0..n-1.

    A payload that already is v2 (a client sending v2 batches with an old Produce version,
    which Kafka accepts) is returned as it is, for the log to validate.
    """
    data = bytes(message_set)
    if len(data) > _MAGIC_AT and data[_MAGIC_AT] == MAGIC:
        return data
    records: list[Record] = []
    codec = CODEC_NONE
    pos = 0
    while pos < len(data):
        if len(data) - pos < _ENTRY_SIZE:
            raise CorruptRecordError(f"message set truncated at byte {pos}")
        _, size = _ENTRY.unpack_from(data, pos)
        end = pos + _ENTRY_SIZE + size
        if size < _MIN_MESSAGE or end > len(data):
            raise CorruptRecordError(f"message at byte {pos} has an invalid size {size}")
        magic = data[pos + _MAGIC_AT]
        if magic not in (0, 1):
            raise CorruptRecordError(f"message at byte {pos} has magic {magic}, expected 0 or 1")
        wrapper_codec = _read_message(data[pos:end], magic, records)
        if wrapper_codec != CODEC_NONE:
            codec = wrapper_codec  # Kafka keeps the last codec it saw ("producer" compression)
        pos = end
    if not records:
        raise InvalidRecordError("produce request carries no messages")
    return build_batch(records, base_offset=0, compression=codec)


def _read_message(entry: bytes, magic: int, out: list[Record]) -> int:
    """Appends the message's record(s) to ``out``; returns the wrapper's codec."""
    attributes = entry[_MAGIC_AT + 1]
    if magic == 1 and attributes & _ATTR_LOG_APPEND_TIME:
        raise InvalidTimestampError("a producer may not set the LogAppendTime timestamp type")
    codec = attributes & _ATTR_CODEC
    if codec not in (CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4):
        raise UnsupportedCompressionTypeError(f"codec {codec} has no message format v{magic}")
    try:
        wrapper = LegacyRecordBatch(entry, magic)
        if not wrapper.validate_crc():
            raise CorruptRecordError("message CRC mismatch")
        for message in wrapper:
            if codec != CODEC_NONE and not message.validate_crc():
                raise CorruptRecordError("CRC mismatch in a compressed message")
            timestamp = message.timestamp if magic == 1 else -1
            out.append(Record(len(out), timestamp, message.key, message.value))
    except CorruptRecordError:
        raise
    except Exception as exc:  # kafka-python: assertions, codec errors, short buffers
        raise CorruptRecordError(f"undecodable message set: {exc!r}") from exc
    return codec


def down_convert(batches: Iterable[bytes | memoryview], fetch_offset: int, magic: int) -> bytes:
    """The records at or past ``fetch_offset`` in stored v2 batches, as a magic 0/1 set."""
    out = bytearray()
    data = b"".join(batches)
    for pos, header in iter_batches(data):
        if header.is_control or header.last_offset < fetch_offset:
            continue
        (batch,) = decode_batches(data[pos : pos + header.size])
        records = [r for r in batch.records if r.offset >= fetch_offset]
        if not records:
            continue
        if batch.compression == CODEC_ZSTD:
            raise UnsupportedCompressionTypeError(
                f"offset {records[0].offset} is zstd-compressed; message format v{magic} "
                "cannot carry zstd (fetch with version 10 or later)"
            )
        log_append = magic == 1 and batch.timestamp_type == 1
        if batch.compression == CODEC_NONE:
            attributes = _ATTR_LOG_APPEND_TIME if log_append else 0
            for r in records:
                out += _message(r.offset, magic, attributes, r.timestamp, r.key, r.value)
        else:
            out += _wrapper(records, magic, batch.compression, log_append, batch.max_timestamp)
    return bytes(out)


def _wrapper(
    records: Sequence[Record], magic: int, codec: int, log_append: bool, max_timestamp: int
) -> bytes:
    base = records[0].offset
    inner = bytearray()
    for r in records:
        offset = r.offset - base if magic == 1 else r.offset
        inner += _message(offset, magic, 0, r.timestamp, r.key, r.value)
    if codec == CODEC_GZIP:
        payload = gzip_encode(bytes(inner), compresslevel=_GZIP_LEVEL)
    elif codec == CODEC_SNAPPY:
        payload = snappy_encode(bytes(inner))
    elif magic == 0:  # CODEC_LZ4 with the framing bug of magic 0 (KIP-57)
        payload = lz4_encode_old_kafka(bytes(inner))
    else:
        payload = lz4_encode(bytes(inner))
    attributes = codec | (_ATTR_LOG_APPEND_TIME if log_append else 0)
    timestamp = max_timestamp if log_append else max(r.timestamp for r in records)
    return _message(records[-1].offset, magic, attributes, timestamp, None, payload)


def _message(
    offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None
) -> bytes:
    if magic == 0:
        head = struct.pack(">bb", 0, attributes)
    else:
        head = struct.pack(">bbq", 1, attributes, timestamp)
    body = head + _field(key) + _field(value)
    crc = zlib.crc32(body)
    return _ENTRY.pack(offset, 4 + len(body)) + struct.pack(">I", crc) + body


def _field(data: bytes | None) -> bytes:
    if data is None:
        return _LENGTH.pack(-1)
    return _LENGTH.pack(len(data)) + bytes(data)
