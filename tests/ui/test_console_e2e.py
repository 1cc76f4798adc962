"""The web console in a real headless Chromium, driving a real ``sluice up``.

Each test leaves screenshots of the pages it visits in ``test-artifacts/screenshots/``.
Waiting is Playwright's: ``expect`` retries until the page shows what is asserted (or its
timeout passes), so nothing here sleeps to synchronise with the hub.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from hub.rest.server import RestServer
from hub.runtime.config import WorkerConfig
from sluice.web import build_app
from tests.fixtures.broker import BrokerProcess
from tests.fixtures.browser import screenshot
from tests.fixtures.hub import HubProcess
from tests.ui.conftest import ConfigOnlyHerder, now_ms, produce

pytestmark = pytest.mark.usefixtures("signed_in")  # test_sign_in_* use fresh browser contexts

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips with the reason
    expect = None


def _create_topic(hub: HubProcess, name: str, partitions: int = 1) -> None:
    status, body = hub.request(
        "POST", "/console/api/topics", {"name": name, "partitions": partitions}
    )
    assert status == 201, body


def test_file_source_from_the_form_to_its_messages(
    console_hub: HubProcess, page: Any, tmp_path: Path
) -> None:
    """Create through the schema form (a validation error first), RUNNING, messages, pause."""
    events = tmp_path / "app.log"
    events.write_text(
        json.dumps({"event": "hello-from-file", "user": "ada"}) + "\nplain second line\n"
    )
    page.goto(f"{console_hub.rest_url}/ui/#/connectors/new")
    page.get_by_role("button", name=re.compile(r"FileStreamSourceConnector")).click()
    page.locator("#field-name").fill("ui-file-source")
    page.locator("#field-file").fill(str(events))
    page.get_by_role("button", name="Create connector").click()

    topic_error = page.locator('[data-field="topic"] .field-error')
    expect(topic_error).to_contain_text("Missing required")
    expect(page.locator("#field-topic")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_contain_text("Fix 1 field")
    screenshot(page, "e2e-connector-new-validation")

    page.locator("#field-topic").fill("ui-file-events")
    page.locator("#field-topic").press("Enter")  # forms submit with Enter
    expect(page).to_have_url(re.compile(r"#/connectors/ui-file-source$"))
    state = page.locator("h1 .badge").first
    expect(state).to_have_text("RUNNING")
    tasks = page.get_by_role("table", name="Tasks")
    expect(tasks).to_contain_text("RUNNING")
    expect(page.get_by_role("link", name="browse messages")).to_be_visible()
    # the throughput chart reads the hub's /metrics counters (two samples make a rate)
    chart = page.get_by_role("img", name=re.compile(r"^Records per second: polled"))
    expect(chart).to_be_visible(timeout=15_000)
    screenshot(page, "e2e-connector-detail")

    page.get_by_role("button", name="Pause").click()
    expect(state).to_have_text("PAUSED")
    expect(tasks).to_contain_text("PAUSED")
    page.get_by_role("button", name="Resume").click()
    expect(state).to_have_text("RUNNING")
    expect(tasks).to_contain_text("RUNNING")

    page.get_by_role("button", name="Stop").click()  # offsets can be reset only when STOPPED
    expect(state).to_have_text("STOPPED")
    expect(page.get_by_role("table", name="Offsets")).to_contain_text(str(events))
    page.get_by_role("button", name="Reset offsets").click()
    expect(page.get_by_role("status").filter(has_text="reset successfully")).to_be_visible()
    expect(page.get_by_text("No committed offsets")).to_be_visible()
    page.get_by_role("button", name="Resume").click()
    expect(state).to_have_text("RUNNING")

    page.get_by_role("link", name="browse messages").click()
    messages = page.get_by_role("table", name="Messages")
    expect(messages).to_contain_text("hello-from-file")
    expect(messages).to_contain_text("plain second line")
    screenshot(page, "topic-messages-file")

    page.goto(f"{console_hub.rest_url}/ui/#/connectors")
    row = page.get_by_role("row").filter(has_text="ui-file-source")
    expect(row).to_contain_text("RUNNING")
    expect(row).to_contain_text("1/1 running")
    expect(row).to_contain_text("ui-file-events")
    screenshot(page, "connectors-first")


def test_failed_connector_shows_its_trace_and_comes_first(
    console_hub: HubProcess, page: Any, tmp_path: Path
) -> None:
    """Pasted Kafka Connect JSON; a task that cannot open its file FAILs with a trace."""
    config = {
        "name": "ui-broken-sink",
        "config": {
            "connector.class": "file-sink",
            "topics": "ui-file-events",
            "file": str(tmp_path / "no-such-dir" / "out.txt"),
        },
    }
    page.goto(f"{console_hub.rest_url}/ui/#/connectors/new")
    page.get_by_role("tab", name="Paste JSON").click()
    page.get_by_label(re.compile("Kafka Connect JSON")).fill(json.dumps(config))
    page.get_by_role("button", name="Create connector").click()
    expect(page).to_have_url(re.compile(r"#/connectors/ui-broken-sink$"))
    tasks = page.get_by_role("table", name="Tasks")
    expect(tasks).to_contain_text("FAILED")
    expect(page.locator("h1")).to_contain_text("1 task failed")
    tasks.get_by_text("Error trace").click()
    expect(tasks.locator("pre.trace")).to_contain_text("FileNotFoundError")
    screenshot(page, "e2e-connector-failed")

    page.get_by_role("link", name="Overview").click()
    first = page.locator(".card", has_text="Connectors").get_by_role("row").nth(1)
    expect(first).to_contain_text("ui-broken-sink")
    expect(first).to_contain_text("FAILED")
    page.goto(f"{console_hub.rest_url}/ui/#/connectors/ui-broken-sink")
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_label(re.compile("to confirm")).fill("ui-broken-sink")
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"#/connectors$"))
    expect(page.locator("main .card").locator("table, .empty").first).to_be_visible()
    expect(page.get_by_role("link", name="ui-broken-sink")).to_have_count(0)


def test_reset_offsets_of_an_inactive_group(console_hub: HubProcess, page: Any) -> None:
    topic, group = f"ui-orders-{uuid.uuid4().hex[:6]}", "ui-billing"
    _create_topic(console_hub, topic)
    produce(console_hub.bootstrap, topic, [f"order-{i}" for i in range(5)])
    consumer = Consumer({"bootstrap.servers": console_hub.bootstrap, "group.id": group})
    consumer.commit(offsets=[TopicPartition(topic, 0, 5)], asynchronous=False)
    consumer.close()

    page.goto(f"{console_hub.rest_url}/ui/#/groups")
    page.get_by_role("link", name=group).click()
    offsets = page.get_by_role("table", name="Committed offsets")
    row = offsets.get_by_role("row").filter(has_text=topic)
    expect(row.locator("td").nth(4)).to_have_text("0")  # lag
    page.get_by_label("Reset to").select_option("earliest")
    page.get_by_role("button", name="Preview reset").click()
    page.get_by_role("button", name="Apply reset to 1 partition").click()
    page.get_by_role("dialog").get_by_role("button", name="Reset offsets").click()
    expect(page.get_by_role("status").filter(has_text="Offsets reset")).to_contain_text(
        f"{topic}-0 → 0"
    )
    expect(row.locator("td").nth(2)).to_have_text("0")  # committed
    expect(row.locator("td").nth(4)).to_have_text("5")  # lag
    screenshot(page, "e2e-group-detail")

    check = Consumer({"bootstrap.servers": console_hub.bootstrap, "group.id": group})
    [committed] = check.committed([TopicPartition(topic, 0)], timeout=10)
    check.close()
    assert committed.offset == 0

    page.goto(f"{console_hub.rest_url}/ui/#/groups")
    expect(page.get_by_role("table", name="Consumer groups")).to_contain_text(group)
    screenshot(page, "e2e-groups")


def test_browse_a_topic_from_a_timestamp(console_hub: HubProcess, page: Any) -> None:
    topic = f"ui-events-{uuid.uuid4().hex[:6]}"
    _create_topic(console_hub, topic)
    now = now_ms()
    stamps = [now - 3 * 3600_000, now - 2 * 3600_000, now - 3600_000]
    values = ['{"step": "old-event"}', '{"step": "mid-event"}', '{"step": "new-event"}']
    produce(console_hub.bootstrap, topic, values, timestamps=stamps)

    page.goto(f"{console_hub.rest_url}/ui/#/topics/{topic}")
    messages = page.get_by_role("table", name="Messages")
    expect(messages).to_contain_text("old-event")
    start = datetime.fromtimestamp((now - 150 * 60_000) / 1000, UTC)
    page.get_by_label("From").select_option("timestamp")
    page.get_by_label("Timestamp (ISO 8601 or epoch ms)").fill(start.strftime("%Y-%m-%dT%H:%M:%SZ"))
    page.get_by_label("Timestamp (ISO 8601 or epoch ms)").press("Enter")
    expect(messages).not_to_contain_text("old-event")
    expect(messages).to_contain_text("mid-event")
    expect(messages).to_contain_text("new-event")
    expect(messages.locator("tbody tr")).to_have_count(2)
    messages.locator("tbody tr").first.click()
    value = page.get_by_role("complementary", name="Message detail").get_by_label(
        "Value", exact=True
    )
    expect(value).to_have_text('{\n  "step": "mid-event"\n}')  # pretty

    page.get_by_label("Value contains").fill("new-")
    page.get_by_role("button", name="Browse").click()
    expect(messages.locator("tbody tr")).to_have_count(1)

    page.get_by_role("button", name="Live tail").click()
    produce(console_hub.bootstrap, topic, ['{"step": "new-live"}'])
    expect(messages).to_contain_text("new-live")
    page.get_by_role("button", name="Stop tail").click()


def test_topics_create_produce_and_configure(console_hub: HubProcess, page: Any) -> None:
    topic = f"ui-made-{uuid.uuid4().hex[:6]}"
    page.goto(f"{console_hub.rest_url}/ui/#/topics")
    page.get_by_text("Create a topic").click()
    page.get_by_label("Name").fill(topic)
    page.get_by_label("Partitions").fill("3")
    page.get_by_label("Name").press("Enter")
    expect(page).to_have_url(re.compile(f"#/topics/{topic}"))
    page.get_by_role("tab", name="Partitions").click()
    expect(page.get_by_role("table", name="Partitions").locator("tbody tr")).to_have_count(3)

    page.get_by_role("tab", name="Produce").click()
    produce_form = page.get_by_role("form", name="Produce a message")
    produce_form.get_by_label("Key (optional)").fill("user-7")
    produce_form.get_by_label("Value", exact=True).fill('{"hello": "console"}')
    produce_form.get_by_role("button", name="Produce").click()
    expect(page.get_by_role("status").filter(has_text="Written to partition")).to_be_visible()
    page.get_by_role("tab", name="Messages").click()
    expect(page.get_by_role("table", name="Messages")).to_contain_text("user-7")

    page.get_by_role("tab", name="Configs").click()
    config_form = page.get_by_role("form", name="Set a topic config")
    config_form.get_by_label("Config").fill("retention.ms")
    config_form.get_by_label("Value").fill("3600000")
    config_form.get_by_label("Value").press("Enter")
    expect(page.get_by_role("status").filter(has_text="retention.ms set")).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile("1 set on this topic"))).to_be_visible()
    expect(page.get_by_role("tab", name="Configs")).to_have_attribute("aria-selected", "true")
    screenshot(page, "topic-configs")

    page.goto(f"{console_hub.rest_url}/ui/#/topics")
    row = page.get_by_role("row").filter(has_text=topic)
    expect(row).to_contain_text("1 h")
    screenshot(page, "e2e-topics")


def test_overview_and_pipelines_pages(console_hub: HubProcess, page: Any) -> None:
    page.goto(f"{console_hub.rest_url}/ui/")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    page.keyboard.press("Tab")  # the skip link comes first, then the main navigation
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    expect(page).to_have_url(re.compile(r"/ui/$"))  # the route did not change
    expect(page.locator(".stat").first).to_contain_text("Brokers")
    expect(page.locator("svg.chart polyline").first).to_be_attached()  # >= 2 rate samples
    screenshot(page, "e2e-overview")
    page.set_viewport_size({"width": 1920, "height": 1080})
    screenshot(page, "e2e-overview-1920")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.get_by_role("link", name="Pipelines").click()
    status, _ = console_hub.request("GET", "/pipelines")
    if status == 404:
        expect(page.get_by_text("Pipelines are not available on this hub")).to_be_visible()
    else:  # the Spark pipelines API is served: the list (maybe empty) and the templates
        expect(page.get_by_role("heading", name="Pipelines", exact=True).last).to_be_visible()
        expect(page.get_by_role("table", name="Templates")).to_be_visible()
    screenshot(page, "pipelines-first-visit")


def test_pipeline_from_a_template(console_hub: HubProcess, page: Any, tmp_path: Path) -> None:
    """Define a pipeline in the form (a config error first); its page shows it IDLE, no runs."""
    if console_hub.request("GET", "/pipelines")[0] == 404:
        pytest.skip("this hub serves no /pipelines API")
    page.goto(f"{console_hub.rest_url}/ui/#/pipelines")
    form = page.get_by_role("form", name="Create pipeline")
    form.get_by_label("Name").fill("ui-log-counts")
    form.get_by_label("Template", exact=True).select_option("log_aggregation")
    form.get_by_label("Template config (JSON)").fill('{"input": {}}')
    form.get_by_role("button", name="Create pipeline").click()
    expect(form.get_by_role("alert")).to_contain_text("invalid config")
    config = {
        "input": {"bootstrap_servers": console_hub.bootstrap, "topics": ["ui-file-events"]},
        "checkpoint_dir": str(tmp_path / "checkpoint"),
        "output_topic": "ui-log-counts",
    }
    form.get_by_label("Template config (JSON)").fill(json.dumps(config))
    form.get_by_label("Schedule (cron, UTC; empty = manual)").fill("0 3 * * *")
    form.get_by_label("Name").press("Enter")
    expect(page).to_have_url(re.compile(r"#/pipelines/ui-log-counts$"))
    expect(page.locator("h1 .badge")).to_have_text("IDLE")
    expect(page.get_by_role("heading", name="Recent runs (0)")).to_be_visible()
    expect(page.locator(".card", has_text="Definition")).to_contain_text("0 3 * * *")
    screenshot(page, "e2e-pipeline-detail")
    page.get_by_role("link", name="Pipelines", exact=True).first.click()
    pipelines = page.get_by_role("table", name="Pipelines")
    row = pipelines.get_by_role("row").filter(has_text="ui-log-counts")
    expect(row).to_contain_text("IDLE")
    expect(row).to_contain_text("never")
    screenshot(page, "e2e-pipelines")
    page.goto(f"{console_hub.rest_url}/ui/#/pipelines/ui-log-counts")
    page.get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"#/pipelines$"))


@pytest.mark.parametrize("path", ["#/nowhere", "#/topics/no-such-topic-here"])
def test_unknown_pages_say_so(console_hub: HubProcess, page: Any, path: str) -> None:
    page.goto(f"{console_hub.rest_url}/ui/{path}")
    expect(page.get_by_role("alert")).to_be_visible()


def _fresh_page(browser: Any) -> Any:
    """A page in a new browser context: no session cookie."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    return context.new_page()


def test_sign_in_with_the_generated_token(console_hub: HubProcess, browser: Any) -> None:
    """A default ``sluice up``: the console asks for the token from hub.token, then works,
    changes included (cookie + JSON + Origin), until the user signs out."""
    page = _fresh_page(browser)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{console_hub.rest_url}/ui/#/topics")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        screenshot(page, "sign-in")
        page.get_by_label("Token").fill("not-the-token")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("alert")).to_contain_text("not accepted")
        page.get_by_label("Token").fill(console_hub.token)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="All topics")).to_be_visible()
        cookies = page.context.cookies()
        assert [c["httpOnly"] for c in cookies] == [True]
        assert cookies[0]["sameSite"] == "Strict" and console_hub.token not in cookies[0]["value"]
        topic = f"ui-signed-in-{uuid.uuid4().hex[:6]}"
        page.get_by_text("Create a topic").click()
        page.get_by_label("Name").fill(topic)
        page.get_by_label("Name").press("Enter")  # a POST with the cookie: CSRF rules pass
        expect(page).to_have_url(re.compile(f"#/topics/{topic}"))
        assert page.evaluate("document.cookie") == ""  # HttpOnly: no script can read it
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        page.goto(f"{console_hub.rest_url}/ui/#/connectors")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    finally:
        page.context.close()
    assert not errors, errors


def test_sign_in_when_the_api_needs_a_token(broker: BrokerProcess, browser: Any) -> None:
    """With rest.auth.token configured, the pages load, the data asks for the token, then shows."""
    config = WorkerConfig.from_mapping(
        {"bootstrap.servers": broker.bootstrap, "rest.auth.token": "console-s3cret"}
    )
    app = build_app(ConfigOnlyHerder(config), config)
    server = RestServer(app, "127.0.0.1", 0)
    server.start()
    page = _fresh_page(browser)
    try:
        page.goto(f"{server.url}/ui/#/topics")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        page.get_by_label("Token").fill("wrong")
        page.get_by_label("Token").press("Enter")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        page.get_by_label("Token").fill("console-s3cret")
        page.get_by_label("Token").press("Enter")
        expect(page.get_by_role("heading", name="Topics", exact=True)).to_be_visible()
        expect(page.get_by_role("heading", name="All topics")).to_be_visible()
    finally:
        page.context.close()
        server.stop()  # RestServer runs no lifespan, so stop the console's sampler here
        console = getattr(app.state, "console", None)
        if console is not None:
            console.rates.stop()
