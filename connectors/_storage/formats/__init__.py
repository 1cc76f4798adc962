"""Records -> bytes of one file: the ``format.class`` axis.

A ``RecordFormat`` makes a ``FileBuffer`` per open file; the writer ``add``s records and, on
commit, takes the whole file from ``finish()``. Files are built in memory because S3 needs the
complete object (or its parts) anyway and Parquet can only be written whole; memory is bounded
by ``flush.size`` x record size per open file.

Compression (``compress``) applies to line formats only; Parquet compresses inside the file
(``parquet.codec``).
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from typing import Any, Protocol

from hub.api import ConfigError, SinkRecord


class FileBuffer(Protocol):
    count: int

    def add(self, record: SinkRecord) -> None:
        """Appends one record; raises DataError if the record cannot be represented."""

    def add_many(self, records: Sequence[SinkRecord]) -> None:
        """Appends records (the hot path); on a DataError the records before the bad one are
        in, the rest are not, as with ``add`` one by one."""

    def finish(self) -> bytes:
        """The complete file."""


class RecordFormat(Protocol):
    extension: str

    def new_file(self) -> FileBuffer: ...


_ALIASES = {
    "json": "json",
    "jsonformat": "json",
    "parquet": "parquet",
    "parquetformat": "parquet",
    "bytearray": "bytearray",
    "bytearrayformat": "bytearray",
    "bytes": "bytearray",
    "avro": "avro",
    "avroformat": "avro",
}


def resolve_format(format_class: str) -> str:
    """``json`` | ``parquet`` | ``bytearray`` | ``avro`` for a Confluent class name (S3's
    ``io.confluent.connect.s3.format.avro.AvroFormat``, HDFS's ``io.confluent.connect.hdfs3.
    avro.AvroFormat``, ...) or a short name."""
    short = format_class.rsplit(".", 1)[-1].lower()
    if short not in _ALIASES:
        raise ConfigError(
            "unknown format",
            {"format.class": [f"unknown format {format_class!r}; use JsonFormat, "
                              "AvroFormat, ParquetFormat or ByteArrayFormat"]},
        )  # fmt: skip
    return _ALIASES[short]


COMPRESSION_EXTENSIONS = {"none": "", "gzip": ".gz", "snappy": ".snappy", "zstd": ".zst"}


def compress(data: bytes, kind: str, level: int = -1) -> bytes:
    """Whole-file compression: gzip (Confluent's), snappy (framed) and zstd (extensions)."""
    if kind == "none":
        return data
    if kind == "gzip":
        return gzip.compress(data, compresslevel=6 if level < 0 else level, mtime=0)
    import cramjam

    if kind == "snappy":
        return bytes(cramjam.snappy.compress(data))
    if kind == "zstd":
        return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression {kind!r}")


def build_format(cfg: Any) -> RecordFormat:
    """The format for a storage config (``StorageSinkConfig``)."""
    kind = resolve_format(cfg.format_class)
    if kind == "json":
        from connectors._storage.formats.json import JsonFormat

        return JsonFormat(cfg.compression, cfg.compression_level)
    if kind == "bytearray":
        from connectors._storage.formats.raw_bytes import ByteArrayFormat

        return ByteArrayFormat(
            cfg.bytearray_extension, cfg.bytearray_separator, cfg.compression,
            cfg.compression_level,
        )  # fmt: skip
    if kind == "avro":
        from connectors._storage.formats.avro import AvroFormat

        return AvroFormat(cfg.avro_codec)
    from connectors._storage.formats.parquet import ParquetFormat

    return ParquetFormat(cfg.parquet_codec)
