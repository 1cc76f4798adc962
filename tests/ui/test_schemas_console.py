"""The console's schema pages and registry decoding, in the API and in a real browser."""

from __future__ import annotations

import json
import uuid
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.fixtures.broker import BrokerProcess
from tests.fixtures.browser import screenshot
from tests.fixtures.hub import HubProcess
from tests.ui.conftest import console_client

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips with the reason
    expect = None

ORDER = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
}  # fmt: skip


def _produce_avro(
    bootstrap: str, url: str, topic: str, values: list[dict[str, Any]], token: str | None = None
) -> None:
    auth = {  # the registry of `sluice up` takes the hub's token (confluent-kafka's static one)
        "bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": token,
        "bearer.auth.logical.cluster": "-", "bearer.auth.identity.pool.id": "-",
    } if token else {}  # fmt: skip
    client = SchemaRegistryClient({"url": url, **auth})
    serialize = AvroSerializer(client, json.dumps(ORDER))
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(
            topic, value=serialize(value, SerializationContext(topic, MessageField.VALUE))
        )
    assert producer.flush(10) == 0


def test_console_api_lists_subjects_and_decodes(broker: BrokerProcess, registry_url: str) -> None:
    topic = f"ui-avro-{uuid.uuid4().hex[:6]}"
    _produce_avro(broker.bootstrap, registry_url, topic, [{"id": 1, "item": "pen"}])
    client = SchemaRegistryClient({"url": registry_url})
    json_topic = f"{topic}-json"
    doc = {"type": "object", "title": "Click", "properties": {"url": {"type": "string"}}}
    data = JSONSerializer(json.dumps(doc), client)(
        {"url": "/x"}, SerializationContext(json_topic, MessageField.VALUE)
    )
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(json_topic, value=data)
    assert producer.flush(10) == 0
    with console_client(broker, **{"schema.registry.url": registry_url}) as api:
        listed = api.get("/console/api/schemas").json()
        assert listed["configured"] is True
        row = next(s for s in listed["subjects"] if s["subject"] == f"{topic}-value")
        assert (row["type"], row["versions"], row["compatibility"]) == ("AVRO", [1], "BACKWARD")
        detail = api.get(f"/console/api/schemas/{topic}-value").json()
        assert json.loads(detail["versions"][0]["schema"])["name"] == "Order"
        page = api.get(f"/console/api/topics/{topic}/messages?start=earliest").json()
        [record] = page["records"]
        assert record["value_encoding"] == "avro" and record["value_schema_id"] == row["latest_id"]
        assert json.loads(record["value"]) == {"id": 1, "item": "pen"}
        page = api.get(f"/console/api/topics/{json_topic}/messages?start=earliest").json()
        assert json.loads(page["records"][0]["value"]) == {"url": "/x"}
        assert page["records"][0]["value_encoding"] == "json-schema"
    with console_client(broker) as api:  # no registry configured: said so, nothing decoded
        assert api.get("/console/api/schemas").json() == {"configured": False, "subjects": []}


def test_schema_pages_in_the_browser(console_hub: HubProcess, page: Any, signed_in: None) -> None:
    topic = f"ui-avro-{uuid.uuid4().hex[:6]}"
    _produce_avro(console_hub.bootstrap, console_hub.registry_url, topic,
                  [{"id": 41, "item": "decoded-pen"}], token=console_hub.token)  # fmt: skip
    page.goto(f"{console_hub.rest_url}/ui/#/schemas")
    subjects = page.get_by_role("table", name="Subjects")
    expect(subjects).to_contain_text(f"{topic}-value")
    expect(subjects).to_contain_text("BACKWARD")
    screenshot(page, "schemas")
    page.get_by_role("link", name=f"{topic}-value").click()
    expect(page.locator("pre.schema-text")).to_contain_text('"name": "Order"')
    screenshot(page, "schema-subject")
    page.goto(f"{console_hub.rest_url}/ui/#/topics/{topic}")
    messages = page.get_by_role("table", name="Messages")
    expect(messages).to_contain_text("decoded-pen")
    expect(messages.locator(".badge.schema")).to_contain_text("avro")
    screenshot(page, "topic-messages-avro")
