"""The console while a part is down: the hub (no HTTP answer) or the Kafka cluster behind it
(the console API answers 503). The banner says which part, and data that could not be
refreshed is greyed out; a connector's state is no longer shown as RUNNING.

Issue 26: "While the hub is down the page keeps showing RUNNING", and the overview said
"Cannot reach the Kafka cluster" when it was the hub that was down.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hub.rest.server import RestServer
from hub.runtime.config import WorkerConfig
from kafka_admin import KafkaAdmin
from sluice.web import build_app
from tests.fixtures.broker import BrokerProcess
from tests.fixtures.browser import screenshot
from tests.fixtures.hub import HubProcess
from tests.ui.conftest import ConfigOnlyHerder
from tests.ui.seed import wait_for

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips with the reason
    expect = None

KAFKA_TIMEOUT_MS = 40_000
"""The console's admin calls give up after 10 s; the banner follows the first refresh after."""


def test_hub_down_is_said_and_the_connector_is_no_longer_shown_running(
    hub: HubProcess, browser: Any, page: Any, tmp_path: Path
) -> None:
    events = tmp_path / "events.log"
    events.write_text("\n".join(json.dumps({"n": i}) for i in range(20)) + "\n")
    config = {"connector.class": "file-source", "file": str(events), "topic": "outage-events"}
    assert hub.request("PUT", "/connectors/outage-source/config", config)[0] == 201
    wait_for(
        lambda: hub.request("GET", "/connectors/outage-source/offsets")[1].get("offsets"),
        "committed offsets",
    )
    login = page.request.post(f"{hub.rest_url}/console/login", data={"token": hub.token})
    assert login.status == 204
    page.goto(f"{hub.rest_url}/ui/#/connectors/outage-source")
    state = page.locator("h1 .badge").first
    expect(state).to_have_text("RUNNING")
    expect(page.get_by_role("button", name="Pause")).to_be_enabled()
    banner = page.locator("#banner")
    expect(banner).to_be_hidden()

    hub.stop()
    expect(banner).to_contain_text("The hub is not answering")
    expect(state).to_have_text("UNKNOWN")
    expect(page.locator("h1")).to_contain_text("last seen RUNNING")
    expect(page.locator("h1")).to_contain_text("not refreshed since")
    for name in ("Pause", "Resume", "Stop", "Restart"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_disabled()
    expect(page.get_by_role("button", name="Delete", exact=True)).to_be_disabled()
    assert page.evaluate("document.body.dataset.hub") == "down"
    assert (
        page.evaluate("getComputedStyle(document.querySelector('main .live')).opacity") == "0.5"
    )  # the last status shown stays, greyed out
    screenshot(page, "hub-down")


@pytest.fixture
def lonely_broker(tmp_path: Path) -> Any:
    proc = BrokerProcess(tmp_path / "broker")
    proc.start()
    yield proc
    if proc.running:
        proc.stop()


def test_kafka_down_is_told_apart_from_the_hub(lonely_broker: BrokerProcess, browser: Any) -> None:
    config = WorkerConfig.from_mapping(
        {"bootstrap.servers": lonely_broker.bootstrap, "rest.auth.token": "outage"}
    )
    app = build_app(ConfigOnlyHerder(config), config)
    server = RestServer(app, "127.0.0.1", 0)
    server.start()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        assert page.request.post(f"{server.url}/console/login", data={"token": "outage"}).ok
        KafkaAdmin({"bootstrap.servers": lonely_broker.bootstrap}).create_topic("kept", 2, 1, {})
        page.goto(f"{server.url}/ui/#/topics")
        expect(page.get_by_role("table", name="Topics")).to_contain_text("kept")
        lonely_broker.stop()
        banner = page.locator("#banner")
        expect(banner).to_contain_text(
            "The hub cannot reach the Kafka cluster", timeout=KAFKA_TIMEOUT_MS
        )
        expect(banner).not_to_contain_text("hub is not answering")
        expect(page.get_by_role("table", name="Topics")).to_contain_text("kept")  # kept, greyed
        assert page.evaluate("document.body.dataset.kafka") == "down"
        assert re.search("0.5", page.evaluate(
            "getComputedStyle(document.querySelector('main .live-kafka')).opacity"
        ))  # fmt: skip
        screenshot(page, "kafka-down")
    finally:
        context.close()
        server.stop()
        console = getattr(app.state, "console", None)
        if console is not None:
            console.rates.stop()
    assert not errors, errors
