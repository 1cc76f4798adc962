"""Parquet (Confluent ``ParquetFormat``): one row per record value, written by pyarrow.

Schema: when records carry a Connect schema (the JSON converter's schema envelope, or any
schema-aware converter) the Arrow schema is derived from it, so column types are exact and a
nullable column stays typed even if a file holds only nulls; the writer rolls the file when the
schema changes. Schemaless values (plain dicts) get a schema inferred by pyarrow from the
file's rows. A value that is not a struct/map becomes a single column ``value``.

Conversion to Arrow is one ``pyarrow.array`` call over many rows (in C, ~0.5 us/row), much
cheaper than per-record appends from Python. With a Connect schema the rows are converted as
they arrive, a put's worth at a time, in the task's thread: ``finish`` (on the upload thread)
is then only Parquet encoding, which releases the GIL, so it overlaps the next file's
conversion. A value that does not fit the schema is a DataError naming that record, raised by
``add``/``add_many``. Without a schema the rows stay Python dicts until ``finish``, because the
type of each column is inferred from all of the file's rows (the union of their keys).

The file extension carries the codec, as Confluent's does: ``.snappy.parquet``, ``.gz.parquet``.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hub.api import DataError, Schema, SinkRecord, Type
from hub.api.schema import DATE, DECIMAL, TIME, TIMESTAMP

_CODEC_EXT = {"none": "", "uncompressed": "", "snappy": ".snappy", "gzip": ".gz",
              "zstd": ".zstd", "lz4": ".lz4", "brotli": ".brotli"}  # fmt: skip
_PRIMITIVE = {
    Type.INT8: pa.int8(), Type.INT16: pa.int16(), Type.INT32: pa.int32(),
    Type.INT64: pa.int64(), Type.FLOAT32: pa.float32(), Type.FLOAT64: pa.float64(),
    Type.BOOLEAN: pa.bool_(), Type.STRING: pa.string(), Type.BYTES: pa.binary(),
}  # fmt: skip


def arrow_type(schema: Schema) -> pa.DataType:
    """The Arrow type of a Connect schema, logical types included."""
    if schema.name == TIMESTAMP:
        return pa.timestamp("ms", tz="UTC")
    if schema.name == DATE:
        return pa.date32()
    if schema.name == TIME:
        return pa.time32("ms")
    if schema.name == DECIMAL:
        scale = int((schema.parameters or {}).get("scale", "0"))
        precision = int((schema.parameters or {}).get("connect.decimal.precision", "38"))
        return pa.decimal128(precision, scale)
    if schema.type is Type.STRUCT:
        return pa.struct([pa.field(f.name, arrow_type(f.schema), f.schema.optional)
                          for f in schema.fields])  # fmt: skip
    if schema.type is Type.ARRAY:
        assert schema.value is not None
        return pa.list_(arrow_type(schema.value))
    if schema.type is Type.MAP:
        assert schema.key is not None and schema.value is not None
        return pa.map_(arrow_type(schema.key), arrow_type(schema.value))
    return _PRIMITIVE[schema.type]


def arrow_schema(schema: Schema | None) -> pa.Schema | None:
    """Top-level columns: a struct's fields, else one ``value`` column."""
    if schema is None:
        return None
    if schema.type is Type.STRUCT:
        return pa.schema([pa.field(f.name, arrow_type(f.schema), f.schema.optional)
                          for f in schema.fields])  # fmt: skip
    return pa.schema([pa.field("value", arrow_type(schema), schema.optional)])


_CONVERSION_ERRORS = (pa.ArrowException, TypeError, ValueError, OverflowError)


class ParquetFile:
    __slots__ = ("_chunks", "_codec", "_rows", "_schema", "_struct", "_wrap", "count", "first")

    def __init__(self, codec: str) -> None:
        self._codec = codec
        self._rows: list[Any] = []  # schemaless: the values, converted by finish()
        self._chunks: list[pa.Array] = []  # with a schema: converted rows (struct arrays)
        self._schema: pa.Schema | None = None
        self._struct: pa.DataType | None = None  # the rows' struct type, with a schema
        self._wrap: bool | None = None
        self.count = 0
        self.first: SinkRecord | None = None

    def add(self, record: SinkRecord) -> None:
        value = record.value
        if self._wrap is None:
            self.first = record
            schema = record.value_schema
            self._schema = arrow_schema(schema)
            self._struct = pa.struct(list(self._schema)) if self._schema is not None else None
            self._wrap = (
                schema.type is not Type.STRUCT if schema is not None
                else not isinstance(value, dict)
            )  # fmt: skip
        if self._wrap:
            value = {"value": value}
        elif not isinstance(value, dict):
            raise DataError(
                f"{record.topic}-{record.partition}@{record.offset}: Parquet row needs a "
                f"struct/map value like the file's first record, got {type(value).__name__}"
            )
        if self._struct is not None:
            self._chunks.append(self._convert_one(value, record))
        else:
            self._rows.append(value)
        self.count += 1

    def _convert_one(self, value: Any, record: SinkRecord) -> pa.Array:
        try:
            return pa.array([value], type=self._struct)
        except _CONVERSION_ERRORS as exc:
            raise DataError(
                f"{record.topic}-{record.partition}@{record.offset}: value does not fit the "
                f"Parquet schema of its Connect schema ({exc})"
            ) from exc

    def add_many(self, records: Sequence[SinkRecord]) -> None:
        if self._wrap is None or self._wrap:
            for record in records:
                self.add(record)
            return
        rows = [r.value for r in records]
        if list(map(type, rows)).count(dict) != len(rows):
            for record in records:
                self.add(record)
            return
        if self._struct is not None:
            try:
                self._chunks.append(pa.array(rows, type=self._struct))
            except _CONVERSION_ERRORS:
                for record in records:  # names the first record that does not fit
                    self.add(record)
                return
        else:
            self._rows += rows
        self.count += len(rows)

    def finish(self) -> bytes:
        try:
            if self._struct is not None:
                data = pa.chunked_array(self._chunks, type=self._struct)
            else:
                data = pa.array(self._rows)
            table = pa.Table.from_struct_array(data)
        except _CONVERSION_ERRORS as exc:
            first = self.first
            where = f"{first.topic}-{first.partition}" if first else "?"
            raise DataError(
                f"{where}: records do not fit one Parquet schema ({exc}); send a Connect schema "
                "(JSON converter with schemas.enable=true) or keep value types consistent"
            ) from exc
        sink = io.BytesIO()
        codec = "none" if self._codec == "uncompressed" else self._codec
        pq.write_table(table, sink, compression=codec)
        return sink.getvalue()


class ParquetFormat:
    def __init__(self, codec: str = "snappy") -> None:
        if codec not in _CODEC_EXT:
            from hub.api import ConfigError

            raise ConfigError("bad parquet.codec", {"parquet.codec": [f"unknown codec {codec!r}"]})
        self.codec = codec
        self.extension = _CODEC_EXT[codec] + ".parquet"

    def new_file(self) -> ParquetFile:
        return ParquetFile(self.codec)
