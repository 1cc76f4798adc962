"""Raw bytes: each record value as-is, followed by a separator (Confluent ``ByteArrayFormat``).

The value must be bytes (ByteArrayConverter) or text (encoded as UTF-8); anything else is a
DataError, because silently re-encoding it would not be "the bytes of the record".
"""

from __future__ import annotations

from collections.abc import Sequence

from connectors._storage.formats import COMPRESSION_EXTENSIONS, compress
from hub.api import DataError, SinkRecord


class BytesFile:
    __slots__ = ("_chunks", "_compression", "_level", "_sep", "count")

    def __init__(self, separator: bytes, compression: str, level: int) -> None:
        self._chunks: list[bytes] = []
        self._sep = separator
        self._compression = compression
        self._level = level
        self.count = 0

    def add(self, record: SinkRecord) -> None:
        value = record.value
        if isinstance(value, str):
            value = value.encode("utf-8")
        elif isinstance(value, bytearray | memoryview):
            value = bytes(value)
        elif not isinstance(value, bytes):
            raise DataError(
                f"{record.topic}-{record.partition}@{record.offset}: ByteArrayFormat needs bytes, "
                f"got {type(value).__name__} (use the ByteArrayConverter)"
            )
        self._chunks.append(value)
        self.count += 1

    def add_many(self, records: Sequence[SinkRecord]) -> None:
        for record in records:
            self.add(record)

    def finish(self) -> bytes:
        data = self._sep.join(self._chunks) + (self._sep if self._chunks else b"")
        return compress(data, self._compression, self._level)


class ByteArrayFormat:
    def __init__(
        self, extension: str = ".bin", separator: str = "\n", compression: str = "none",
        level: int = -1,
    ) -> None:  # fmt: skip
        self.separator = separator.encode("utf-8").decode("unicode_escape").encode("latin-1")
        self.compression = compression
        self.level = level
        self.extension = extension + COMPRESSION_EXTENSIONS[compression]

    def new_file(self) -> BytesFile:
        return BytesFile(self.separator, self.compression, self.level)
