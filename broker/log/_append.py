"""Stamping a produce request's batches for the log without copying their payloads.

Each batch becomes two buffers for one ``os.writev``: a rewritten copy of its 61-byte header
(base offset, leader epoch, and for LogAppendTime the timestamp-type bit, ``maxTimestamp``
and the CRC) and a zero-copy ``memoryview`` of the rest of the producer's bytes. Copying a
1 MiB request just to change 12 bytes of it would cost as much as writing it.

The CRC covers bytes 21.. to the end of the batch, so it changes only in LogAppendTime mode;
then it is recomputed over the new header tail plus the untouched records (CRC-32C chains:
``crc32c(rest, crc32c(head))``).
"""

from __future__ import annotations

import struct

from crc32c import crc32c

from broker.log.batch import ATTR_TIMESTAMP_TYPE, HEADER_SIZE, BatchHeader
from broker.log.segment import BatchPosition, Buffer

_OFFSET = struct.Struct(">q")
_EPOCH = struct.Struct(">i")
_ATTRS = struct.Struct(">h")
_TS = struct.Struct(">q")
_CRC = struct.Struct(">I")


def stamp(
    records: bytes | memoryview,
    located: list[tuple[int, BatchHeader]],
    first_offset: int,
    leader_epoch: int,
    append_time: int | None,
) -> tuple[list[Buffer], list[BatchPosition]]:
    """Buffers to write and where each batch lands (positions relative to the first)."""
    view = memoryview(records)
    iov: list[Buffer] = []
    positions = []
    offset = first_offset
    out_pos = 0
    for pos, header in located:
        head = bytearray(view[pos : pos + HEADER_SIZE])
        _OFFSET.pack_into(head, 0, offset)
        _EPOCH.pack_into(head, 12, leader_epoch)
        rest = view[pos + HEADER_SIZE : pos + header.size]
        max_ts = header.max_timestamp
        if append_time is not None:
            max_ts = append_time
            _ATTRS.pack_into(head, 21, header.attributes | ATTR_TIMESTAMP_TYPE)
            _TS.pack_into(head, 35, append_time)
            _CRC.pack_into(head, 17, crc32c(rest, crc32c(head[21:])))
        iov.append(head)
        if len(rest):
            iov.append(rest)
        last = offset + header.last_offset_delta
        positions.append(BatchPosition(offset, last, out_pos, header.size, max_ts))
        out_pos += header.size
        offset = last + 1
    return iov, positions
