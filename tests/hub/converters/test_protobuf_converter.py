"""ProtobufConverter against Sluice's registry, checked with confluent-kafka's Protobuf serdes."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pool, message_factory

from hub.api.schema import INT64_SCHEMA, OPTIONAL_STRING_SCHEMA, Schema, Type, struct
from hub.converters.logical import DATE_SCHEMA, TIMESTAMP_SCHEMA, decimal_schema
from hub.converters.protobuf import ProtobufConverter, _message_class
from schema_registry.formats import protobuf as proto_format

ITEM = struct(("sku", Schema(Type.STRING)), ("qty", Schema(Type.INT32)), name="shop.Item")
VALUE = struct(
    ("id", INT64_SCHEMA), ("name", OPTIONAL_STRING_SCHEMA), ("price", decimal_schema(2)),
    ("at", TIMESTAMP_SCHEMA), ("day", DATE_SCHEMA), ("small", Schema(Type.INT16)),
    ("tags", Schema(Type.ARRAY, value=Schema(Type.STRING))),
    ("counts", Schema(Type.MAP, key=Schema(Type.STRING), value=INT64_SCHEMA)),
    ("item", ITEM),
    name="shop.Order",
)  # fmt: skip
ROW = {
    "id": 7, "name": "pen", "price": decimal.Decimal("12.50"),
    "at": dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.UTC), "day": dt.date(2024, 5, 6),
    "small": -3, "tags": ["a", "b"], "counts": {"x": 1}, "item": {"sku": "p1", "qty": 2},
}  # fmt: skip


def conv(url: str) -> ProtobufConverter:
    return ProtobufConverter({"schema.registry.url": url}, False)


def test_round_trip(registry_url: str) -> None:
    topic = f"pb-{uuid.uuid4().hex[:6]}"
    data = conv(registry_url).from_connect(topic, VALUE, ROW)
    assert data is not None and data[:1] == b"\x00" and data[5:6] == b"\x00"
    reader = conv(registry_url)
    got = reader.to_connect(topic, data)
    assert got.value == ROW
    assert got.schema is reader.to_connect(topic, data).schema
    assert got.schema.name == "shop.Order"
    assert got.schema.field("small").schema.type is Type.INT16  # kept in the field's meta
    assert got.schema.field("price").schema.parameters == {"scale": "2"}
    latest = SchemaRegistryClient({"url": registry_url}).get_latest_version(f"{topic}-value")
    assert "message Order" in latest.schema.schema_str and latest.schema.schema_type == "PROTOBUF"


def test_confluent_serdes_interop(registry_url: str) -> None:
    topic = f"pb-{uuid.uuid4().hex[:6]}"
    client = SchemaRegistryClient({"url": registry_url})
    ctx = SerializationContext(topic, MessageField.VALUE)
    text = 'syntax = "proto3";\npackage t%s;\nmessage Click { string url = 1; int32 n = 2; }\n'
    parsed = proto_format.parse(text % uuid.uuid4().hex[:6], {})
    fd = parsed.descriptor
    fd.name = "click.proto"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    Click = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{fd.package}.Click"))
    theirs = ProtobufSerializer(Click, client, {"use.deprecated.format": False})(
        Click(url="/x", n=3), ctx
    )
    got = conv(registry_url).to_connect(topic, theirs)
    assert got.value == {"url": "/x", "n": 3}
    ours = conv(registry_url).from_connect(f"{topic}-o", VALUE, ROW)
    other = SerializationContext(f"{topic}-o", MessageField.VALUE)
    registered = client.get_latest_version(f"{topic}-o-value").schema.schema_str
    Order = _message_class(proto_format.parse(registered, {}), "Order", [0])  # the app's class
    message = ProtobufDeserializer(Order, {"use.deprecated.format": False}, client)(ours, other)
    assert (message.id, message.name, message.small) == (7, "pen", -3)
    assert message.item.sku == "p1" and message.day.year == 2024
    assert message.at.ToDatetime(tzinfo=dt.UTC) == ROW["at"]
