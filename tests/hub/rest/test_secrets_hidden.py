"""PASSWORD-type config values are ``[hidden]`` in every REST answer that returns configs, and
sending ``[hidden]`` back keeps the stored secret (the real Herder, a real broker)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hub.rest.masking import HIDDEN, client_secret, mask
from tests.fixtures.broker import BrokerProcess
from tests.hub.rest.conftest import real_herder_client
from tests.hub.rest.test_connectors import assert_error

pytest.importorskip("hub.runtime.herder")

TOKEN_SECRET = "webhook-token-s3cret"
HMAC_SECRET = "hmac-s3cret"
PASSWORD = "basic-pa55word"
SECRETS = (TOKEN_SECRET, HMAC_SECRET, PASSWORD)


@pytest.fixture
def api(broker: BrokerProcess) -> Iterator[TestClient]:
    with real_herder_client(broker.bootstrap, "secrets") as client:
        yield client


def webhook(topic: str) -> dict[str, str]:
    return {
        "connector.class": "http-webhook",
        "topic": topic,
        "webhook.auth.token": TOKEN_SECRET,
        "webhook.hmac.secret": HMAC_SECRET,
    }


def poll(topic: str) -> dict[str, str]:
    return {
        "connector.class": "http-poll",
        "topic": topic,
        "url": "http://127.0.0.1:9/never",
        "auth.type": "basic",
        "auth.username": "reader",
        "auth.password": PASSWORD,
        "poll.interval.ms": "3600000",
    }


def no_secret_in(response: Any) -> Any:
    assert response.status_code < 300, response.text
    for secret in SECRETS:
        assert secret not in response.text, (secret, response.request.url)
    return response.json()


def stored(api: TestClient, name: str) -> dict[str, str]:
    config: dict[str, str] = api.app.state.herder.connector_config(name)  # type: ignore[attr-defined]
    return config


def test_secrets_hidden_in_every_config_response(api: TestClient) -> None:
    topic, hook, poller = uuid.uuid4().hex[:8], f"hook-{uuid.uuid4().hex[:6]}", "poller"
    created = no_secret_in(api.post("/connectors", json={"name": hook, "config": webhook(topic)}))
    assert created["config"]["webhook.auth.token"] == HIDDEN
    assert created["config"]["topic"] == topic  # only secrets are masked
    put = no_secret_in(api.put(f"/connectors/{poller}/config", json=poll(topic)))
    assert put["config"]["auth.password"] == HIDDEN and put["config"]["auth.username"] == "reader"

    config = no_secret_in(api.get(f"/connectors/{hook}/config"))
    assert config["webhook.auth.token"] == HIDDEN and config["webhook.hmac.secret"] == HIDDEN
    assert no_secret_in(api.get(f"/connectors/{poller}"))["config"]["auth.password"] == HIDDEN
    expanded = no_secret_in(api.get("/connectors", params=[("expand", "info")]))
    assert expanded[hook]["info"]["config"]["webhook.auth.token"] == HIDDEN
    tasks = no_secret_in(api.get(f"/connectors/{hook}/tasks"))
    assert tasks and all(t["config"].get("webhook.auth.token") == HIDDEN for t in tasks)
    no_secret_in(api.get(f"/connectors/{poller}/tasks"))
    validated = no_secret_in(
        api.put("/connector-plugins/http-poll/config/validate", json=poll(topic))
    )
    values = {c["value"]["name"]: c for c in validated["configs"]}
    assert values["auth.password"]["value"]["value"] == HIDDEN
    assert values["auth.password"]["definition"]["type"] == "PASSWORD"
    keys = no_secret_in(api.get("/connector-plugins/http-webhook/config"))
    assert {k["name"] for k in keys if k["type"] == "PASSWORD"} == {
        "webhook.auth.token",
        "webhook.hmac.secret",
    }

    # the stored config still holds the real values (until config providers exist)
    assert stored(api, hook)["webhook.auth.token"] == TOKEN_SECRET


def test_hidden_sent_back_keeps_the_stored_secret(api: TestClient) -> None:
    topic, name = uuid.uuid4().hex[:8], f"hook-{uuid.uuid4().hex[:6]}"
    assert api.post("/connectors", json={"name": name, "config": webhook(topic)}).status_code == 201
    shown = api.get(f"/connectors/{name}/config").json()
    shown["webhook.max.records"] = "500"  # a console edit of another key
    no_secret_in(api.put(f"/connectors/{name}/config", json=shown))
    after_put = stored(api, name)
    assert after_put["webhook.auth.token"] == TOKEN_SECRET
    assert after_put["webhook.hmac.secret"] == HMAC_SECRET
    assert after_put["webhook.max.records"] == "500"

    patched = api.patch(
        f"/connectors/{name}/config", json={"webhook.auth.token": HIDDEN, "topic": "other"}
    )
    no_secret_in(patched)
    assert stored(api, name)["webhook.auth.token"] == TOKEN_SECRET
    assert stored(api, name)["topic"] == "other"
    changed = api.patch(f"/connectors/{name}/config", json={"webhook.auth.token": "new-token"})
    assert changed.status_code == 200 and "new-token" not in changed.text
    assert stored(api, name)["webhook.auth.token"] == "new-token"


def test_hidden_for_a_new_connector_is_refused(api: TestClient) -> None:
    config = {**webhook("t"), "webhook.auth.token": HIDDEN}
    response = api.post("/connectors", json={"name": "fresh", "config": config})
    assert_error(response, 400, fields=("webhook.auth.token",))
    assert_error(api.put("/connectors/fresh2/config", json=config), 400)
    assert "fresh" not in api.get("/connectors").json()


def test_kafka_client_secrets_hidden_under_any_prefix() -> None:
    config = {
        "producer.override.sasl.jaas.config": "org...PlainLoginModule user=a password=b;",
        "value.converter.basic.auth.user.info": "u:p",
        "consumer.override.ssl.key.password": "k",
        "topic": "t",
    }
    secrets = {k for k in config if client_secret(k)}
    assert mask(config, secrets) == {**dict.fromkeys(list(config)[:3], HIDDEN), "topic": "t"}
