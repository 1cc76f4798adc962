"""The registry server on a real broker: restart, the topic's record layout, REST, auth."""

from __future__ import annotations

import base64
import json
import uuid

import httpx
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError

from schema_registry.server import RegistryServer
from tests.fixtures.broker import BrokerProcess

MEDIA = "application/vnd.schemaregistry.v1+json"


def _server(broker: BrokerProcess, topic: str, settings: object = None) -> RegistryServer:
    server = RegistryServer({"bootstrap.servers": broker.bootstrap}, port=0, topic=topic,
                            settings=settings)  # fmt: skip
    server.start()
    return server


def _avro(*fields: str) -> str:
    return json.dumps({"type": "record", "name": "R", "fields": [
        {"name": f, "type": "string", "default": ""} for f in fields]})  # fmt: skip


def test_restart_keeps_every_id(broker: BrokerProcess) -> None:
    topic = f"_schemas-{uuid.uuid4().hex[:8]}"
    first = _server(broker, topic)
    try:
        client = SchemaRegistryClient({"url": first.url})
        ids = {
            ("a", 1): client.register_schema("a", Schema(_avro("x"), "AVRO")),
            ("a", 2): client.register_schema("a", Schema(_avro("x", "y"), "AVRO")),
            ("b", 1): client.register_schema("b", Schema('{"type":"string"}', "JSON")),
            ("c", 1): client.register_schema(
                "c", Schema('syntax = "proto3"; message M { int32 n = 1; }', "PROTOBUF")
            ),
            ("d", 1): client.register_schema("d", Schema(_avro("x"), "AVRO")),  # shares a's v1 id
        }
        client.set_compatibility("a", "FULL")
        client.delete_subject("b")
        before = {s: first.registry.versions(s, deleted=True) for s in "abcd"}
    finally:
        first.stop()
    second = _server(broker, topic)
    try:
        client = SchemaRegistryClient({"url": second.url})
        for (subject, version), schema_id in ids.items():
            got = second.registry.version(subject, version, deleted=True)
            assert got.id == schema_id, (subject, version)
        assert {s: second.registry.versions(s, deleted=True) for s in "abcd"} == before
        assert ids[("a", 1)] == ids[("d", 1)]
        assert client.get_compatibility("a") == "FULL"
        assert "b" not in client.get_subjects()
        new_id = client.register_schema("e", Schema(_avro("z"), "AVRO"))
        assert new_id == max(ids.values()) + 1
    finally:
        second.stop()


def test_topic_records_use_confluent_layout(broker: BrokerProcess) -> None:
    topic = f"_schemas-{uuid.uuid4().hex[:8]}"
    server = _server(broker, topic)
    try:
        SchemaRegistryClient({"url": server.url}).register_schema(
            "orders-value", Schema('{"type":"string"}', "JSON")
        )
    finally:
        server.stop()
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "inspect"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        msg = consumer.poll(10)
        assert msg is not None and msg.error() is None
        assert msg.key() == b'{"keytype":"SCHEMA","subject":"orders-value","version":1,"magic":1}'
        assert json.loads(msg.value()) == {
            "subject": "orders-value", "version": 1, "id": 1, "schemaType": "JSON",
            "schema": '{"type":"string"}', "deleted": False,
        }  # fmt: skip
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def http(registry_url: str) -> httpx.Client:
    return httpx.Client(base_url=registry_url, headers={"Content-Type": MEDIA}, timeout=30)


def test_rest_details(http: httpx.Client) -> None:
    subject = f"rest-{uuid.uuid4().hex[:6]}"
    r = http.post(f"/subjects/{subject}/versions", content=json.dumps({"schema": _avro("x")}))
    assert r.status_code == 200 and r.headers["content-type"].startswith(MEDIA)
    sid = r.json()["id"]
    assert http.get(f"/schemas/ids/{sid}/schema").json() == json.loads(_avro("x"))
    assert http.get(f"/subjects/{subject}/versions/1/schema").json() == json.loads(_avro("x"))
    assert http.get(f"/schemas/ids/{sid}/versions").json() == [{"subject": subject, "version": 1}]
    assert http.get(f"/subjects/{subject}/versions/-1").json()["version"] == 1
    bad = http.post(f"/subjects/{subject}/versions", content=b"{not json")
    assert bad.status_code == 400 and bad.json()["error_code"] == 400
    invalid = http.post(f"/subjects/{subject}/versions", content=json.dumps({"schema": "{"}))
    assert (invalid.status_code, invalid.json()["error_code"]) == (422, 42201)
    missing = http.get(f"/subjects/{subject}-nope/versions")
    assert (missing.status_code, missing.json()["error_code"]) == (404, 40401)
    assert http.get("/schemas/ids/999999").json()["error_code"] == 40403
    assert http.get(f"/config/{subject}").json()["error_code"] == 40408
    assert http.get(f"/config/{subject}?defaultToGlobal=true").json() == {
        "compatibilityLevel": "BACKWARD"
    }
    verbose = http.post(
        f"/compatibility/subjects/{subject}/versions/latest?verbose=true",
        content=json.dumps(
            {
                "schema": json.dumps(
                    {"type": "record", "name": "R", "fields": [{"name": "x", "type": "int"}]}
                )
            }
        ),
    ).json()
    assert verbose["is_compatible"] is False and verbose["messages"]
    assert http.put(f"/mode/{subject}", content=json.dumps({"mode": "READONLY"})).json() == {
        "mode": "READONLY"
    }
    refused = http.post(f"/subjects/{subject}/versions", content=json.dumps({"schema": _avro("y")}))
    assert (refused.status_code, refused.json()["error_code"]) == (422, 42205)
    assert http.delete(f"/mode/{subject}").json() == {"mode": "READONLY"}


def test_protobuf_serialized_format(http: httpx.Client) -> None:
    subject = f"pb-{uuid.uuid4().hex[:6]}"
    text = 'syntax = "proto3";\npackage t;\nmessage M {\n  int32 n = 1;\n}\n'
    body = {"schema": text, "schemaType": "PROTOBUF"}
    sid = http.post(f"/subjects/{subject}/versions", content=json.dumps(body)).json()["id"]
    plain = http.get(f"/schemas/ids/{sid}").json()
    assert plain["schemaType"] == "PROTOBUF" and plain["schema"] == text
    serialized = http.get(f"/schemas/ids/{sid}?format=serialized").json()["schema"]
    from google.protobuf import descriptor_pb2

    fd = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    assert fd.package == "t" and fd.message_type[0].name == "M"


def test_auth_basic_and_bearer(broker: BrokerProcess) -> None:
    settings = {"rest.auth.basic": "alice:s3cret", "rest.auth.token": "tok-123"}
    server = _server(broker, f"_schemas-{uuid.uuid4().hex[:8]}", settings)
    try:
        anonymous = httpx.get(server.url + "/subjects")
        assert anonymous.status_code == 401
        assert httpx.get(server.url + "/subjects", auth=("alice", "wrong")).status_code == 401
        bearer = httpx.get(server.url + "/subjects", headers={"Authorization": "Bearer tok-123"})
        assert bearer.status_code == 200
        client = SchemaRegistryClient({
            "url": server.url,
            "basic.auth.user.info": "alice:s3cret",
        })  # fmt: skip
        assert client.register_schema("s", Schema('{"type":"string"}', "AVRO")) == 1
        with pytest.raises(SchemaRegistryError) as exc:
            SchemaRegistryClient({"url": server.url}).get_subjects()
        assert exc.value.http_status_code == 401
    finally:
        server.stop()


def test_a_taken_port_is_a_clear_error(broker: BrokerProcess) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = RegistryServer({"bootstrap.servers": broker.bootstrap}, port=port,
                                topic=f"_schemas-{uuid.uuid4().hex[:8]}")  # fmt: skip
        with pytest.raises(RuntimeError, match="--schema-registry-port"):
            server.start(ready_timeout=20)
