"""Avro object container files (Confluent ``AvroFormat``), written by fastavro.

One file holds records of one Connect value schema (the writer rolls files when it changes,
per ``schema.compatibility``); the file's Avro schema is derived from it with Confluent's
AvroData rules (``hub.api.avro_data``), so a file written from a topic the AvroConverter
reads carries the registry's schema, ``connect.*`` annotations included. ``avro.codec``
chooses the block codec (null, deflate, snappy, bzip2, xz, zstandard), as in Confluent.

Records need a schema (a schema-aware converter: AvroConverter, ProtobufConverter,
JsonSchemaConverter or JSON with schemas): a record without one is a DataError naming it.
Values are kept as they arrive and encoded in ``finish`` (on the upload thread), in one
``fastavro.writer`` call over the file's rows.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import fastavro

from hub.api import ConfigError, DataError, Schema, SinkRecord
from hub.api.avro_data import avro_schema, avro_writer

CODECS = ("null", "deflate", "snappy", "bzip2", "xz", "zstandard")


class AvroFile:
    __slots__ = ("_codec", "_convert", "_parsed", "_rows", "_schema", "count", "first")

    def __init__(self, codec: str) -> None:
        self._codec = codec
        self._rows: list[Any] = []
        self._schema: Schema | None = None
        self._parsed: Any = None
        self._convert: Any = None
        self.count = 0
        self.first: SinkRecord | None = None

    def _start(self, record: SinkRecord) -> None:
        schema = record.value_schema
        if schema is None:
            raise DataError(
                f"{record.topic}-{record.partition}@{record.offset}: AvroFormat needs records "
                "with a value schema (AvroConverter, or JsonConverter with schemas.enable=true)"
            )
        try:
            self._parsed = fastavro.parse_schema(avro_schema(schema))
        except (fastavro.schema.SchemaParseException, ValueError) as exc:
            raise DataError(
                f"{record.topic}: no Avro schema for its Connect schema: {exc}"
            ) from exc
        self._schema = schema
        self._convert = avro_writer(schema)
        self.first = record

    def add(self, record: SinkRecord) -> None:
        if self._schema is None:
            self._start(record)
        value = record.value
        if value is None:
            raise DataError(
                f"{record.topic}-{record.partition}@{record.offset}: a null value (tombstone) "
                "cannot be written to an Avro file; drop tombstones with a transform "
                "(e.g. the Filter SMT with the RecordIsTombstone predicate)"
            )
        if self._convert is not None:
            value = self._convert(value)
        try:  # checked here, so a bad record is named now rather than failing the whole file
            if not fastavro.validation.validate(value, self._parsed, raise_errors=False):
                raise ValueError("value does not match the schema")
        except (ValueError, TypeError, AttributeError) as exc:
            raise DataError(
                f"{record.topic}-{record.partition}@{record.offset}: value does not fit the "
                f"file's Avro schema ({exc})"
            ) from exc
        self._rows.append(value)
        self.count += 1

    def add_many(self, records: Sequence[SinkRecord]) -> None:
        for record in records:
            self.add(record)

    def finish(self) -> bytes:
        sink = io.BytesIO()
        fastavro.writer(sink, self._parsed, self._rows, codec=self._codec)
        return sink.getvalue()


class AvroFormat:
    def __init__(self, codec: str = "null") -> None:
        if codec not in CODECS:
            raise ConfigError(
                "bad avro.codec", {"avro.codec": [f"unknown codec {codec!r}; use {CODECS}"]}
            )
        self.codec = codec
        self.extension = ".avro"

    def new_file(self) -> AvroFile:
        return AvroFile(self.codec)
