"""AvroConverter against Sluice's registry, checked with confluent-kafka's own serdes."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from hub.api import ConfigError, DataError, RetriableError
from hub.api.schema import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, Schema, Type, struct
from hub.converters.avro import AvroConverter
from hub.converters.config import configure_converters
from hub.converters.logical import DATE_SCHEMA, TIMESTAMP_SCHEMA, decimal_schema

VALUE = struct(
    ("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA), ("price", decimal_schema(2)),
    ("at", TIMESTAMP_SCHEMA), ("day", DATE_SCHEMA), ("tiny", Schema(Type.INT8)),
    ("tags", Schema(Type.ARRAY, value=STRING_SCHEMA)),
    ("counts", Schema(Type.MAP, key=Schema(Type.INT32), value=INT64_SCHEMA)),
    ("dbz", Schema(Type.INT32, optional=True, name="io.debezium.time.Date", version=1)),
    name="shop.Order",
)  # fmt: skip
ROW = {
    "id": 7, "name": "pen", "price": decimal.Decimal("12.50"),
    "at": dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.UTC), "day": dt.date(2024, 5, 6),
    "tiny": -3, "tags": ["a", "b"], "counts": {1: 10, 2: 20}, "dbz": 19849,
}  # fmt: skip


def converter(url: str, is_key: bool = False, **extra: Any) -> AvroConverter:
    return AvroConverter({"schema.registry.url": url, **extra}, is_key)


@pytest.fixture
def topic() -> str:
    return f"orders-{uuid.uuid4().hex[:6]}"


def test_round_trip_and_one_schema_object_per_id(registry_url: str, topic: str) -> None:
    conv = converter(registry_url)
    data = conv.from_connect(topic, VALUE, ROW)
    assert data is not None and data[0] == 0
    reader = converter(registry_url)
    first, second = reader.to_connect(topic, data), reader.to_connect(topic, data)
    assert first.value == ROW
    assert first.schema is second.schema  # sinks cache per schema object
    assert first.schema.name == "shop.Order" and first.schema.version == 1  # registry version
    assert first.schema.field("price").schema.parameters == {"scale": "2"}
    assert first.schema.field("dbz").schema.name == "io.debezium.time.Date"
    assert conv.from_connect(topic, VALUE, None) is None
    assert reader.to_connect(topic, None).value is None


def test_confluent_serdes_read_and_write_the_same_bytes(registry_url: str, topic: str) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    ours = converter(registry_url).from_connect(topic, VALUE, ROW)
    theirs = AvroDeserializer(client)(ours, ctx)
    assert theirs["price"] == decimal.Decimal("12.50") and theirs["tiny"] == -3
    assert theirs["counts"] == [{"key": 1, "value": 10}, {"key": 2, "value": 20}]
    plain = {"type": "record", "name": "Click", "fields": [
        {"name": "url", "type": "string"}, {"name": "n", "type": ["null", "int"],
                                            "default": None}]}  # fmt: skip
    clicks = SerializationContext(f"{topic}-clicks", MessageField.VALUE)
    data = AvroSerializer(client, json.dumps(plain))({"url": "/x", "n": 3}, clicks)
    got = converter(registry_url).to_connect(f"{topic}-clicks", data)
    assert got.value == {"url": "/x", "n": 3}
    assert got.schema.name == "Click" and got.schema.field("n").schema.optional


def test_subject_strategies(registry_url: str, topic: str) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    converter(registry_url, is_key=True).from_connect(topic, VALUE, ROW)
    assert f"{topic}-key" in client.get_subjects()
    strategy = "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"
    converter(registry_url, **{"value.subject.name.strategy": strategy}).from_connect(
        topic, VALUE, ROW
    )
    assert f"{topic}-shop.Order" in client.get_subjects()
    with pytest.raises(ConfigError):
        converter(registry_url, **{"value.subject.name.strategy": "Nope"})


def test_auto_register_off_and_use_latest(registry_url: str, topic: str) -> None:
    off = converter(registry_url, **{"auto.register.schemas": "false"})
    with pytest.raises(DataError, match="40401"):
        off.from_connect(topic, VALUE, ROW)
    registered = converter(registry_url).from_connect(topic, VALUE, ROW)
    assert (
        converter(registry_url, **{"auto.register.schemas": "false"}).from_connect(
            topic, VALUE, ROW
        )
        == registered
    )
    narrower = struct(*[(f.name, f.schema) for f in VALUE.fields if f.name != "dbz"],
                      name="shop.Order")  # fmt: skip
    row = {k: v for k, v in ROW.items() if k != "dbz"}
    latest = converter(registry_url, **{"use.latest.version": "true"})
    data = latest.from_connect(topic, narrower, row)
    assert data is not None and data[1:5] == registered[1:5]  # written with the latest id


def test_errors(registry_url: str, topic: str) -> None:
    with pytest.raises(DataError, match="magic byte"):
        converter(registry_url).to_connect(topic, b"{}")
    with pytest.raises(DataError, match="needs a Connect schema"):
        converter(registry_url).from_connect(topic, None, {"a": 1})
    with pytest.raises(DataError):
        converter(registry_url).from_connect(topic, VALUE, {**ROW, "id": "not a number"})
    with pytest.raises(RetriableError):  # nobody listens: the worker retries
        converter("http://127.0.0.1:9").from_connect(topic, VALUE, ROW)
    with pytest.raises(ConfigError) as exc:
        converter(registry_url, **{"normalize.schemas": "true"})
    assert "normalize.schemas" in str(exc.value.errors)


def test_resolves_by_java_class_name(registry_url: str) -> None:
    from hub.plugins.manager import create_plugin_manager

    plugins = create_plugin_manager(load_entrypoints=False)
    built = configure_converters({}, {
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": registry_url,
    }, plugins)  # fmt: skip
    assert isinstance(built.value, AvroConverter)
