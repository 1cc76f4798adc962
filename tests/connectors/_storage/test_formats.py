"""Formats: JSON lines, bytes and Parquet files, compression and their extensions."""

from __future__ import annotations

import gzip
import io
import json

import pyarrow.parquet as pq
import pytest

from connectors._storage.formats import compress, resolve_format
from connectors._storage.formats.json import JsonFormat
from connectors._storage.formats.parquet import ParquetFormat
from connectors._storage.formats.raw_bytes import ByteArrayFormat
from hub.api import ConfigError, DataError
from hub.api.schema import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, struct
from tests.connectors._storage.sink_context import rec


def test_confluent_class_names_resolve() -> None:
    assert resolve_format("io.confluent.connect.s3.format.json.JsonFormat") == "json"
    assert resolve_format("io.confluent.connect.hdfs3.parquet.ParquetFormat") == "parquet"
    assert resolve_format("io.confluent.connect.s3.format.bytearray.ByteArrayFormat") == "bytearray"
    assert resolve_format("io.confluent.connect.s3.format.avro.AvroFormat") == "avro"
    assert resolve_format("io.confluent.connect.hdfs3.avro.AvroFormat") == "avro"
    with pytest.raises(ConfigError):
        resolve_format("io.confluent.connect.s3.format.orc.OrcFormat")


def test_json_lines_with_bytes_and_gzip() -> None:
    fmt = JsonFormat("gzip")
    assert fmt.extension == ".json.gz"
    f = fmt.new_file()
    f.add(rec(0, {"a": 1, "b": b"\x00\x01", "s": "é"}))
    f.add(rec(1, "plain"))
    lines = gzip.decompress(f.finish()).decode().splitlines()
    assert [json.loads(x) for x in lines] == [{"a": 1, "b": "AAE=", "s": "é"}, "plain"]


def test_json_rejects_unserialisable_value_as_data_error() -> None:
    f = JsonFormat().new_file()
    with pytest.raises(DataError, match="t-0@7"):
        f.add(rec(7, {"x": object()}))
    assert f.count == 0


def test_bytes_format_separator_and_type_check() -> None:
    fmt = ByteArrayFormat(".bin", "\\n", "zstd")
    assert fmt.extension == ".bin.zst"
    f = fmt.new_file()
    f.add(rec(0, b"one"))
    f.add(rec(1, "two"))
    import cramjam

    assert bytes(cramjam.zstd.decompress(f.finish())) == b"one\ntwo\n"
    with pytest.raises(DataError, match="ByteArrayConverter"):
        f.add(rec(2, {"not": "bytes"}))


def test_parquet_with_connect_schema_keeps_types() -> None:
    schema = struct(("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA))
    fmt = ParquetFormat("snappy")
    assert fmt.extension == ".snappy.parquet"
    f = fmt.new_file()
    f.add(rec(0, {"id": 1, "name": None}, schema=schema))
    f.add(rec(1, {"id": 2, "name": "b"}, schema=schema))
    table = pq.read_table(io.BytesIO(f.finish()))
    assert str(table.schema.field("id").type) == "int64"
    assert str(table.schema.field("name").type) == "string"  # typed although first is null
    assert table.to_pylist() == [{"id": 1, "name": None}, {"id": 2, "name": "b"}]


def test_parquet_inferred_and_wrapped_primitives() -> None:
    f = ParquetFormat("none").new_file()
    f.add(rec(0, {"x": 1.5}))
    f.add(rec(1, {"x": 2.5, "y": "new"}))
    assert pq.read_table(io.BytesIO(f.finish())).to_pylist() == [
        {"x": 1.5, "y": None}, {"x": 2.5, "y": "new"}
    ]  # fmt: skip
    g = ParquetFormat("zstd").new_file()
    g.add(rec(0, "a"))
    assert pq.read_table(io.BytesIO(g.finish())).to_pylist() == [{"value": "a"}]


def test_parquet_inconsistent_rows_are_a_data_error() -> None:
    f = ParquetFormat().new_file()
    f.add(rec(0, {"x": 1}))
    with pytest.raises(DataError, match="struct/map"):
        f.add(rec(1, 5))
    f.add(rec(2, {"x": "text"}))
    with pytest.raises(DataError, match="Parquet schema"):
        f.finish()


def test_compress_snappy_roundtrip() -> None:
    import cramjam

    assert bytes(cramjam.snappy.decompress(compress(b"abc" * 100, "snappy"))) == b"abc" * 100


def test_parquet_value_not_fitting_its_schema_is_named_by_add_many() -> None:
    schema = struct(("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA))
    f = ParquetFormat().new_file()
    good = [rec(i, {"id": i, "name": f"n{i}"}, schema=schema) for i in range(3)]
    f.add_many(good)
    with pytest.raises(DataError, match=r"t-0@4.*Parquet schema"):
        f.add_many([rec(3, {"id": 3, "name": None}, schema=schema),
                    rec(4, {"id": "four", "name": None}, schema=schema),
                    rec(5, {"id": 5, "name": None}, schema=schema)])  # fmt: skip
    assert f.count == 4  # the records before the bad one are in, the rest are not
    assert [r["id"] for r in pq.read_table(io.BytesIO(f.finish())).to_pylist()] == [0, 1, 2, 3]


def test_json_lines_what_orjson_refuses_goes_through_the_stdlib_encoder() -> None:
    import datetime as dt
    import decimal

    f = JsonFormat().new_file()
    f.add_many([
        rec(0, {"big": 2**70, "when": dt.datetime(2020, 1, 1, tzinfo=dt.UTC),
                "day": dt.date(1970, 1, 3), "dec": decimal.Decimal("1.5")}),
        rec(1, {1: "int key"}),
        rec(2, {"nan": float("nan")}),
    ])  # fmt: skip
    f.add(rec(3, {"lone": "\ud800"}))
    lines = f.finish().split(b"\n")
    assert lines[:3] == [b'{"big":1180591620717411303424,"when":1577836800000,"day":2,"dec":1.5}',
                         b'{"1":"int key"}', b'{"nan":null}']  # fmt: skip
    assert json.loads(lines[3]) == {"lone": "\ud800"}
    assert lines[4:] == [b""]
