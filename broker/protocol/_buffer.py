"""Response framing without copying record payloads.

kio's writers call ``write()`` once per field. :class:`ResponseBuffer` coalesces the many small
writes into bytearrays but keeps large ones (record data) as their own chunks, so a Fetch
response carrying megabytes of batches read from segment files goes to the socket with
``writelines`` and is never concatenated (measured: copying 1 MiB into one buffer costs
~50x the encoding itself). :class:`RecordChunks` lets a handler put a list of chunks in a
``records`` field: kio asks for its ``len()`` to write the length prefix, then passes it to
``write()``, where the buffer splices the chunks in.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

_SIZE = struct.Struct(">i")
_BIG = 4096


class RecordChunks:
    """A ``records`` field value made of several byte chunks (whole batches, in order)."""

    __slots__ = ("chunks", "size")

    def __init__(self, chunks: Sequence[bytes | memoryview], size: int | None = None) -> None:
        self.chunks = chunks
        self.size = sum(len(c) for c in chunks) if size is None else size

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        # kio only tests ``is None``; an empty record set is still a present (empty) field.
        return True


class ResponseBuffer:
    """A size-prefixed frame being assembled; ``chunks()`` gives the parts to send."""

    __slots__ = ("_chunks", "_size", "_small")

    def __init__(self) -> None:
        self._chunks: list[bytes | bytearray | memoryview] = []
        self._small = bytearray(4)  # room for the size prefix, patched in chunks()
        self._size = 0

    def write(self, data: bytes | bytearray | memoryview | RecordChunks) -> None:
        if isinstance(data, RecordChunks):
            self._flush_small()
            self._chunks.extend(data.chunks)
            self._size += data.size
            return
        n = len(data)
        self._size += n
        if n >= _BIG:
            self._flush_small()
            self._chunks.append(data)
        else:
            self._small += data

    def _flush_small(self) -> None:
        if self._small:
            self._chunks.append(self._small)
            self._small = bytearray()

    def chunks(self) -> list[bytes | bytearray | memoryview]:
        """The frame: 4-byte size then the payload. Call once, after the last write."""
        self._flush_small()
        first = self._chunks[0]
        assert isinstance(first, bytearray)
        _SIZE.pack_into(first, 0, self._size)
        return self._chunks

    @property
    def size(self) -> int:
        """Payload bytes written so far (the frame's size prefix excluded)."""
        return self._size
