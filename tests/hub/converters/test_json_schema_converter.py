"""JsonSchemaConverter against Sluice's registry, checked with confluent-kafka's JSON serdes."""

from __future__ import annotations

import decimal
import json
import uuid

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from hub.api import DataError
from hub.api.schema import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, Schema, Type, struct
from hub.converters.json_schema import JsonSchemaConverter
from hub.converters.logical import decimal_schema

VALUE = struct(
    ("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA), ("price", decimal_schema(2)),
    ("tags", Schema(Type.ARRAY, value=Schema(Type.STRING))),
    ("attrs", Schema(Type.MAP, key=Schema(Type.STRING), value=Schema(Type.INT32))),
    name="shop.Order",
)  # fmt: skip
ROW = {"id": 7, "name": None, "price": decimal.Decimal("12.50"), "tags": ["a"],
       "attrs": {"x": 1}}  # fmt: skip


def conv(url: str, **extra: str) -> JsonSchemaConverter:
    return JsonSchemaConverter({"schema.registry.url": url, **extra}, False)


def test_round_trip_and_confluent_interop(registry_url: str) -> None:
    topic = f"js-{uuid.uuid4().hex[:6]}"
    data = conv(registry_url).from_connect(topic, VALUE, ROW)
    assert data is not None and data[0] == 0
    reader = conv(registry_url)
    got = reader.to_connect(topic, data)
    assert got.value == ROW
    assert got.schema is reader.to_connect(topic, data).schema
    assert [f.name for f in got.schema.fields] == ["id", "name", "price", "tags", "attrs"]
    assert got.schema.field("name").schema.optional and got.schema.name == "shop.Order"
    client = SchemaRegistryClient({"url": registry_url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    theirs = JSONDeserializer(None, schema_registry_client=client)(data, ctx)
    assert theirs["id"] == 7 and theirs["attrs"] == {"x": 1}
    plain = {"type": "object", "title": "Click", "properties": {
        "url": {"type": "string"}, "n": {"type": "integer"}}, "required": ["url"]}  # fmt: skip
    other = SerializationContext(f"{topic}-c", MessageField.VALUE)
    written = JSONSerializer(json.dumps(plain), client)({"url": "/x", "n": 3}, other)
    read = conv(registry_url).to_connect(f"{topic}-c", written)
    assert read.value == {"url": "/x", "n": 3}
    assert read.schema.field("n").schema.type is Type.INT64
    assert read.schema.field("n").schema.optional and not read.schema.field("url").schema.optional


def test_validation_when_asked(registry_url: str) -> None:
    topic = f"js-{uuid.uuid4().hex[:6]}"
    strict = conv(registry_url, **{"json.fail.invalid.schema": "true"})
    assert strict.from_connect(topic, VALUE, ROW) is not None
    with pytest.raises(DataError):
        strict.from_connect(topic, VALUE, {**ROW, "id": "x"})
