"""confluent-kafka's own schema-registry client and serdes against Sluice's registry.

For each format: register, evolve compatibly, have an incompatible change refused with
Confluent's error (HTTP 409, code 40901), then produce both versions through the Sluice broker
with the serializer and read them back with the deserializer. Unmodified client code: the
registry is what a Confluent user would point these at.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pool, message_factory

from schema_registry.formats import protobuf as proto_format
from tests.fixtures.broker import BrokerProcess


def _roundtrip(
    broker: BrokerProcess, topic: str, values: list[bytes], decode: Callable[[bytes], Any]
) -> list[Any]:
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for value in values:
        producer.produce(topic, value=value)
    assert producer.flush(30) == 0
    consumer = Consumer({
        "bootstrap.servers": broker.bootstrap, "group.id": f"g-{uuid.uuid4().hex}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
    })  # fmt: skip
    consumer.subscribe([topic])
    out: list[Any] = []
    try:
        for _ in range(200):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                out.append(decode(msg.value()))
            if len(out) == len(values):
                break
    finally:
        consumer.close()
    return out


def _incompatible(client: SchemaRegistryClient, subject: str, schema: Schema) -> None:
    with pytest.raises(SchemaRegistryError) as exc:
        client.register_schema(subject, schema)
    assert exc.value.http_status_code == 409
    assert exc.value.error_code == 40901


def test_avro(registry_url: str, broker: BrokerProcess, topic_name: str) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    v1 = {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
    }
    v2 = {**v1, "fields": [*v1["fields"], {"name": "qty", "type": "int", "default": 1}]}
    v3 = {**v1, "fields": [*v1["fields"], {"name": "note", "type": "string"}]}  # no default
    ctx = SerializationContext(topic_name, MessageField.VALUE)
    first = AvroSerializer(client, json.dumps(v1))({"id": 1, "item": "pen"}, ctx)
    second = AvroSerializer(client, json.dumps(v2))({"id": 2, "item": "ink", "qty": 3}, ctx)
    subject = f"{topic_name}-value"
    assert client.get_versions(subject) == [1, 2]
    _incompatible(client, subject, Schema(json.dumps(v3), "AVRO"))
    assert client.test_compatibility(subject, Schema(json.dumps(v3), "AVRO")) is False
    assert client.test_compatibility(subject, Schema(json.dumps(v2), "AVRO")) is True
    decode = AvroDeserializer(client)
    got = _roundtrip(broker, topic_name, [first, second], lambda b: decode(b, ctx))
    assert got == [{"id": 1, "item": "pen"}, {"id": 2, "item": "ink", "qty": 3}]
    reader = AvroDeserializer(client, json.dumps(v2))  # old data read with the new schema
    assert reader(first, ctx) == {"id": 1, "item": "pen", "qty": 1}


PROTO_V1 = """syntax = "proto3";
package {pkg};
message Order {{ int64 id = 1; string item = 2; }}
"""


def _proto_class(text: str, name: str) -> Any:
    """A generated-message class built at run time (what protoc's Python output would be)."""
    parsed = proto_format.parse(text, {})
    fd = parsed.descriptor
    fd.name = name
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{fd.package}.Order"))


def test_protobuf(registry_url: str, broker: BrokerProcess, topic_name: str) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    pkg = f"p{uuid.uuid4().hex[:8]}"
    v1 = PROTO_V1.format(pkg=pkg)
    v2 = v1.replace("string item = 2;", "string item = 2; int32 qty = 3;")
    v3 = v1.replace("string item = 2;", "int32 item = 2;")  # scalar kind changed
    Order1, Order2 = _proto_class(v1, "order.proto"), _proto_class(v2, "order.proto")
    ctx = SerializationContext(topic_name, MessageField.VALUE)
    conf = {"use.deprecated.format": False}
    first = ProtobufSerializer(Order1, client, conf)(Order1(id=1, item="pen"), ctx)
    second = ProtobufSerializer(Order2, client, conf)(Order2(id=2, item="ink", qty=3), ctx)
    subject = f"{topic_name}-value"
    assert client.get_versions(subject) == [1, 2]
    latest = client.get_latest_version(subject)
    assert "int32 qty = 3;" in latest.schema.schema_str  # stored as .proto text
    _incompatible(client, subject, Schema(v3, "PROTOBUF"))
    decode = ProtobufDeserializer(Order2, {"use.deprecated.format": False}, client)
    got = _roundtrip(broker, topic_name, [first, second], lambda b: decode(b, ctx))
    assert [(m.id, m.item, m.qty) for m in got] == [(1, "pen", 0), (2, "ink", 3)]


def test_json_schema(registry_url: str, broker: BrokerProcess, topic_name: str) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    v1 = {
        "type": "object",
        "title": "Order",
        "additionalProperties": False,
        "properties": {"id": {"type": "integer"}, "item": {"type": "string"}},
    }
    v2 = {**v1, "properties": {**v1["properties"], "qty": {"type": "integer"}}}
    v3 = {**v1, "properties": {"id": {"type": "string"}, "item": {"type": "string"}}}
    ctx = SerializationContext(topic_name, MessageField.VALUE)
    first = JSONSerializer(json.dumps(v1), client)({"id": 1, "item": "pen"}, ctx)
    second = JSONSerializer(json.dumps(v2), client)({"id": 2, "item": "ink", "qty": 3}, ctx)
    subject = f"{topic_name}-value"
    assert client.get_versions(subject) == [1, 2]
    _incompatible(client, subject, Schema(json.dumps(v3), "JSON"))
    decode = JSONDeserializer(None, schema_registry_client=client)
    got = _roundtrip(broker, topic_name, [first, second], lambda b: decode(b, ctx))
    assert got == [{"id": 1, "item": "pen"}, {"id": 2, "item": "ink", "qty": 3}]


def test_client_admin_calls(registry_url: str) -> None:
    client = SchemaRegistryClient({"url": registry_url})
    subject = f"admin-{uuid.uuid4().hex[:6]}"
    schema = Schema(json.dumps({"type": "string"}), "AVRO")
    sid = client.register_schema(subject, schema)
    assert client.get_schema(sid).schema_str == '{"type":"string"}'
    assert client.lookup_schema(subject, schema).version == 1
    assert client.set_compatibility(subject, "FULL_TRANSITIVE") == {
        "compatibility": "FULL_TRANSITIVE"
    }
    assert client.get_compatibility(subject) == "FULL_TRANSITIVE"
    assert subject in client.get_subjects()
    assert sorted(client.get_schema_types()) == ["AVRO", "JSON", "PROTOBUF"]
    assert client.delete_subject(subject) == [1]
    assert client.delete_subject(subject, permanent=True) == [1]
    with pytest.raises(SchemaRegistryError) as exc:
        client.get_latest_version(subject)
    assert exc.value.error_code == 40401
