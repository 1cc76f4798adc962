"""AvroFormat container files and ``schema.compatibility`` through the rolling writer."""

from __future__ import annotations

import datetime as dt
import decimal
import io
from typing import Any

import fastavro
import pytest

from connectors._storage.config import StorageSinkConfig
from connectors._storage.formats import build_format
from hub.api import DataError
from hub.api.schema import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, Schema, Type, struct
from hub.converters.logical import TIMESTAMP_SCHEMA, decimal_schema
from tests.connectors._storage.sink_context import rec
from tests.connectors._storage.test_writer import TP, make


def v(version: int, *extra: tuple[str, Schema]) -> Schema:
    fields = struct(("id", INT64_SCHEMA), *extra).fields
    return Schema(Type.STRUCT, name="shop.Order", version=version, fields=fields)


V1 = v(1)
NOTE = Schema(Type.STRING, optional=True, default="-")
V2 = v(2, ("note", NOTE))


def read(data: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    reader = fastavro.reader(io.BytesIO(data))
    return reader.writer_schema, list(reader)


def files(writer: Any) -> list[tuple[str, bytes]]:
    return [f for b in writer.destination.batches for f in b.files]


def test_container_file_with_logical_types_and_codec() -> None:
    schema = struct(
        ("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA), ("price", decimal_schema(2)),
        ("at", TIMESTAMP_SCHEMA), name="shop.Order",
    )  # fmt: skip
    w = make(**{"format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
                "avro.codec": "deflate"})  # fmt: skip
    at = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    rows = [{"id": i, "name": None if i == 1 else f"n{i}", "price": decimal.Decimal("1.50"),
             "at": at} for i in range(3)]  # fmt: skip
    w.put([rec(i, row, schema=schema) for i, row in enumerate(rows)])
    [(name, data)] = files(w)
    assert name == "topics/t/partition=0/t+0+0000000000.avro"
    avro_schema, back = read(data)
    assert back == rows
    assert avro_schema["name"] == "shop.Order" and avro_schema["connect.name"] == "shop.Order"
    assert fastavro.reader(io.BytesIO(data)).codec == "deflate"


def test_hdfs_class_name_and_errors() -> None:
    hdfs = "io.confluent.connect.hdfs3.avro.AvroFormat"
    cfg = StorageSinkConfig.parse({"topics": "t", "flush.size": 1, "format.class": hdfs})
    assert build_format(cfg).extension == ".avro"
    w = make(**{"format.class": "AvroFormat"})
    with pytest.raises(DataError, match="needs records with a value schema"):
        w.put([rec(0, {"id": 1})])
    with pytest.raises(DataError, match="does not fit"):
        w.put([rec(0, {"id": "one"}, schema=V1)])


def test_none_rolls_on_every_change() -> None:
    w = make(**{"format.class": "AvroFormat", "flush.size": 10})
    w.put([rec(0, {"id": 0}, schema=V2), rec(1, {"id": 1}, schema=V1),
           rec(2, {"id": 2, "note": "x"}, schema=V2)])  # fmt: skip
    w.commit_all()
    assert [n.rsplit("+", 1)[1] for n, _ in files(w)] == [
        "0000000000.avro", "0000000001.avro", "0000000002.avro"]  # fmt: skip


def test_backward_projects_older_records_and_rolls_on_newer() -> None:
    w = make(**{"format.class": "AvroFormat", "flush.size": 10, "schema.compatibility": "backward"})
    w.put([
        rec(0, {"id": 0}, schema=V1),
        rec(1, {"id": 1, "note": "x"}, schema=V2),  # newer: rolls
        rec(2, {"id": 2}, schema=V1),  # older: projected into the V2 file, note = default
        rec(3, {"id": 3, "note": "y"}, schema=V2),
    ])  # fmt: skip
    w.commit_all()
    (_, d1), (second, d2) = files(w)
    assert read(d1)[1] == [{"id": 0}]
    assert read(d2)[1] == [{"id": 1, "note": "x"}, {"id": 2, "note": "-"}, {"id": 3, "note": "y"}]
    assert second.endswith("+0000000001.avro")


def test_forward_projects_newer_records() -> None:
    w = make(**{"format.class": "AvroFormat", "flush.size": 10, "schema.compatibility": "FORWARD"})
    w.put([rec(0, {"id": 0}, schema=V1), rec(1, {"id": 1, "note": "x"}, schema=V2)])
    w.commit_all()
    [(_, data)] = files(w)
    assert read(data)[1] == [{"id": 0}, {"id": 1}]  # the note is dropped


def test_compatibility_needs_versions() -> None:
    w = make(**{"format.class": "AvroFormat", "flush.size": 10, "schema.compatibility": "FULL"})
    unversioned = struct(("id", INT64_SCHEMA), name="shop.Order")
    w.put([rec(0, {"id": 0}, schema=V1)])
    with pytest.raises(DataError, match="versioned schemas"):
        w.put([rec(1, {"id": 1}, schema=unversioned)])
    assert w.writers[TP].count == 1


def test_parquet_columns_come_from_the_registry_schema() -> None:
    """What the AvroConverter gives a sink (a Connect schema derived from the registry's Avro
    schema) types the Parquet columns exactly."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hub.api.avro_data import connect_schema

    registered = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10,
                                   "scale": 2}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ]}  # fmt: skip
    schema = connect_schema(registered)
    w = make(**{"format.class": "ParquetFormat", "flush.size": 1})
    at = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)
    w.put([rec(0, {"id": 1, "price": decimal.Decimal("9.99"), "at": at, "note": None},
               schema=schema)])  # fmt: skip
    [(_, data)] = files(w)
    table = pq.read_table(io.BytesIO(data))
    assert table.schema.field("price").type == pa.decimal128(10, 2)
    assert table.schema.field("at").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("note").nullable and not table.schema.field("id").nullable
    assert table.to_pylist() == [{"id": 1, "price": decimal.Decimal("9.99"), "at": at,
                                  "note": None}]  # fmt: skip
