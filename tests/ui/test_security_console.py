"""The Security page and its API against a real broker with ``authorizer.class.name`` set and
the console's principal (``User:ANONYMOUS`` on the PLAINTEXT listener) a super user: ACLs
added, listed and deleted; SCRAM users created and deleted without the password ever coming
back; client quotas set, edited and removed (issue 26: ACLs/users/quotas)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from hub.rest.server import RestServer
from hub.runtime.config import WorkerConfig
from kafka_admin import KafkaAdmin, security
from sluice.web import build_app
from tests.fixtures.broker import BrokerProcess
from tests.fixtures.browser import screenshot
from tests.fixtures.rest_auth import TOKEN, anonymous
from tests.ui.conftest import ConfigOnlyHerder, console_client

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips with the reason
    expect = None

SECRET = "correct-horse-battery-staple"
ACL = {
    "resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL",
    "principal": "User:alice", "host": "*", "operation": "READ", "permission": "ALLOW",
}  # fmt: skip


@pytest.fixture(scope="module")
def acl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    proc = BrokerProcess(
        tmp_path_factory.mktemp("acl-broker") / "data",
        "--override", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
        "--override", "super.users=User:ANONYMOUS",
    )  # fmt: skip
    proc.start()
    yield proc
    proc.stop()
    assert "handler failed" not in proc.log()


@pytest.fixture
def secure_api(acl_broker: BrokerProcess) -> Iterator[TestClient]:
    with console_client(acl_broker) as client:
        yield client


def test_acls_are_added_filtered_and_deleted(secure_api: TestClient) -> None:
    created = secure_api.post("/console/api/security/acls", json=ACL)
    assert created.status_code == 201, created.text
    other = {**ACL, "principal": "User:bob", "operation": "WRITE", "pattern_type": "PREFIXED"}
    assert secure_api.post("/console/api/security/acls", json=other).status_code == 201
    listed = secure_api.get("/console/api/security/acls").json()
    assert listed["enabled"] is True
    assert ACL in listed["acls"] and other in listed["acls"]
    mine = secure_api.get("/console/api/security/acls", params={"principal": "User:alice"})
    assert mine.json()["acls"] == [ACL]
    removed = secure_api.post("/console/api/security/acls/delete", json=ACL)
    assert removed.json() == {"removed": 1}
    assert ACL not in secure_api.get("/console/api/security/acls").json()["acls"]
    assert secure_api.post("/console/api/security/acls/delete", json=other).json()["removed"] == 1


def test_a_bad_acl_is_refused_by_field(secure_api: TestClient) -> None:
    bad = secure_api.post("/console/api/security/acls", json={**ACL, "operation": "EAT"})
    assert bad.status_code == 400 and "operation" in bad.json()["message"]
    bad = secure_api.post("/console/api/security/acls", json={**ACL, "principal": "alice"})
    assert bad.status_code == 400 and "principal" in bad.json()["message"]


def test_users_are_created_and_deleted_and_the_password_never_comes_back(
    secure_api: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    made = secure_api.post(
        "/console/api/security/users",
        json={"user": "carol", "password": SECRET, "mechanisms": ["SCRAM-SHA-512"]},
    )
    assert made.status_code == 204 and made.content == b""
    users = secure_api.get("/console/api/security/users")
    carol = next(u for u in users.json() if u["user"] == "carol")
    assert carol["mechanisms"] == [{"mechanism": "SCRAM-SHA-512", "iterations": 8192}]
    assert SECRET not in users.text
    gone = secure_api.delete("/console/api/security/users/carol")
    assert gone.json() == {"user": "carol", "deleted": ["SCRAM-SHA-512"]}
    assert all(u["user"] != "carol" for u in secure_api.get("/console/api/security/users").json())
    assert secure_api.delete("/console/api/security/users/carol").status_code == 404
    no_password = secure_api.post("/console/api/security/users", json={"user": "dave"})
    assert no_password.status_code == 400
    assert SECRET not in caplog.text


def test_quotas_are_set_listed_and_removed(secure_api: TestClient) -> None:
    entity = {"user": "alice", "client_id": ""}  # alice with the default client id
    saved = secure_api.post(
        "/console/api/security/quotas",
        json={"entity": entity, "set": {"producer_byte_rate": 1048576, "request_percentage": 50}},
    )
    assert saved.status_code == 200, saved.text
    rows = secure_api.get("/console/api/security/quotas").json()
    row = next(r for r in rows if r["user"] == "alice")
    limits = {"producer_byte_rate": 1048576.0, "request_percentage": 50.0}
    assert row == {"user": "alice", "client_id": "", "quotas": limits}
    secure_api.post("/console/api/security/quotas", json={"entity": entity, "remove": [*limits]})
    assert all(r["user"] != "alice" for r in secure_api.get("/console/api/security/quotas").json())
    bad = secure_api.post("/console/api/security/quotas",
                          json={"entity": entity, "set": {"speed": 1}})  # fmt: skip
    assert bad.status_code == 400 and "speed" in bad.json()["message"]


def test_without_an_authorizer_the_acl_list_says_so(broker: BrokerProcess) -> None:
    with console_client(broker) as client:
        answer = client.get("/console/api/security/acls")
        assert answer.json() == {"enabled": False, "acls": []}
        refused = client.post("/console/api/security/acls", json=ACL)
        assert refused.status_code == 409


def test_security_writes_need_the_csrf_header(acl_broker: BrokerProcess) -> None:
    """A cookie-authenticated form post from another site is refused before it reaches Kafka."""
    config = WorkerConfig.from_mapping({"bootstrap.servers": acl_broker.bootstrap,
                                        "rest.auth.token": TOKEN})  # fmt: skip
    with anonymous(build_app(ConfigOnlyHerder(config), config)) as client:
        assert client.post("/console/login", json={"token": TOKEN}).status_code < 300
        forged = client.post(
            "/console/api/security/users", content=f"user=eve&password={SECRET}",
            headers={"Content-Type": "application/x-www-form-urlencoded",
                     "Origin": "http://evil.example"},
        )  # fmt: skip
        assert forged.status_code == 403
        assert all(u["user"] != "eve" for u in client.get("/console/api/security/users").json())


def _seed(broker: BrokerProcess) -> int:
    """A few ACLs, a user and a default quota of other principals, so the page (and its
    screenshot) shows a realistic cluster; returns how many ACLs it added."""
    admin = KafkaAdmin({"bootstrap.servers": broker.bootstrap})
    acls = [
        {**ACL, "principal": "User:analytics", "operation": "READ", "resource_name": "orders"},
        {**ACL, "principal": "User:analytics", "resource_type": "GROUP",
         "resource_name": "analytics-", "pattern_type": "PREFIXED"},
        {**ACL, "principal": "User:mallory", "operation": "ALL", "resource_name": "*",
         "permission": "DENY"},
        {**ACL, "principal": "User:ops", "resource_type": "CLUSTER", "operation": "DESCRIBE"},
    ]  # fmt: skip
    for spec in acls:
        security.create_acl(admin, spec)
    security.set_user(admin, "analytics", "analytics-secret", [])
    security.alter_quotas(admin, {"user": ""}, {"consumer_byte_rate": 10485760}, [])
    return len(acls)


def test_security_page_manages_acls_users_and_quotas(
    acl_broker: BrokerProcess, browser: Any
) -> None:
    seeded = _seed(acl_broker)
    config = WorkerConfig.from_mapping({"bootstrap.servers": acl_broker.bootstrap,
                                        "rest.auth.token": "c"})  # fmt: skip
    app = build_app(ConfigOnlyHerder(config), config)
    server = RestServer(app, "127.0.0.1", 0)
    server.start()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.post_data or "") if r.method == "POST" else None)
    try:
        assert page.request.post(f"{server.url}/console/login", data={"token": "c"}).ok
        page.goto(f"{server.url}/ui/#/security")
        expect(page.get_by_role("heading", name="Security", exact=True)).to_be_visible()
        nav = page.get_by_role("navigation", name="Main").bounding_box()
        assert nav and nav["height"] < 50, nav  # every page's link on one line at 1280 px
        # add an ACL through the form
        page.get_by_text("Add an ACL").click()
        page.get_by_label("Principal", exact=True).fill("User:web-shop")
        page.get_by_label("Operation", exact=True).select_option("WRITE")
        page.get_by_label("Resource name").fill("orders")
        page.get_by_role("button", name="Add ACL").click()
        acls = page.get_by_role("table", name="ACLs")
        expect(acls).to_contain_text("User:web-shop")
        expect(acls).to_contain_text("TOPIC:orders")
        page.get_by_label("Resource name").fill("payments")
        page.get_by_label("Pattern").select_option("PREFIXED")
        page.get_by_role("button", name="Add ACL").click()
        expect(acls.locator("tbody tr")).to_have_count(seeded + 2)
        page.get_by_label("Filter ACLs").fill("payments")
        expect(acls.locator("tbody tr")).to_have_count(1)
        page.get_by_label("Filter ACLs").fill("")
        # a user; the password field is emptied once sent and never shown
        page.get_by_text("Create a user or set a password").click()
        page.locator("#user-name").fill("web-shop")
        page.get_by_label("Password").fill(SECRET)
        page.get_by_role("button", name="Create or set password").click()
        users = page.get_by_role("table", name="SCRAM users")
        expect(users).to_contain_text("web-shop")
        expect(users).to_contain_text("SCRAM-SHA-512 (8,192 iterations)")
        expect(page.get_by_label("Password")).to_have_value("")
        assert SECRET not in page.content()
        # a quota
        page.get_by_text("Set quotas", exact=True).click()
        page.locator("#quota-user").fill("web-shop")
        page.get_by_label("Produce bytes/s").fill("1048576")
        page.get_by_role("button", name="Save quotas").click()
        quotas = page.get_by_role("table", name="Client quotas")
        expect(quotas).to_contain_text("1,048,576")
        screenshot(page, "security")
        # edit the quota: clearing the field removes it
        page.get_by_role("button", name="Edit quotas of web-shop").click()
        expect(page.get_by_label("Produce bytes/s")).to_have_value("1048576")
        page.get_by_label("Produce bytes/s").fill("")
        page.get_by_label("Fetch bytes/s").fill("2048")
        page.get_by_role("button", name="Save quotas").click()
        expect(quotas).to_contain_text("2,048")
        expect(quotas).not_to_contain_text("1,048,576")
        # delete the ACL after the confirmation, the user after typing its name
        page.get_by_label("Filter ACLs").fill("web-shop")
        expect(acls.locator("tbody tr")).to_have_count(2)
        delete = "Delete ACL ALLOW User:web-shop WRITE on TOPIC:orders"
        acls.get_by_role("button", name=delete).click()
        page.get_by_role("dialog").get_by_role("button", name="Delete ACL").click()
        expect(acls.locator("tbody tr")).to_have_count(1)
        users.get_by_role("button", name="Delete user web-shop").click()
        page.locator("#confirm-name").fill("web-shop")
        page.get_by_role("dialog").get_by_role("button", name="Delete").click()
        expect(users.locator("tbody tr")).to_have_count(1)  # the seeded user only
        expect(users).not_to_contain_text("web-shop")
        assert sum(SECRET in body for body in posted) == 1  # sent once, to create the user
        assert not errors, errors
    finally:
        context.close()
        server.stop()
        console = getattr(app.state, "console", None)
        if console is not None:
            console.rates.stop()


def test_security_page_without_an_authorizer_says_so(broker: BrokerProcess, browser: Any) -> None:
    """No authorizer: the ACL card says why it is empty, the user and quota cards still load."""
    config = WorkerConfig.from_mapping({"bootstrap.servers": broker.bootstrap,
                                        "rest.auth.token": "c"})  # fmt: skip
    app = build_app(ConfigOnlyHerder(config), config)
    server = RestServer(app, "127.0.0.1", 0)
    server.start()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    try:
        assert page.request.post(f"{server.url}/console/login", data={"token": "c"}).ok
        page.goto(f"{server.url}/ui/#/security")
        expect(page.get_by_text("This cluster has no authorizer")).to_be_visible()
        expect(page.get_by_text("No ACLs")).to_be_visible()
        page.get_by_text("Add an ACL").click()
        page.get_by_label("Principal", exact=True).fill("User:x")
        page.get_by_label("Resource name").fill("t")
        page.get_by_role("button", name="Add ACL").click()
        expect(page.get_by_role("alert")).to_contain_text("authorizer")
        expect(page.get_by_role("heading", name="Client quotas")).to_be_visible()
        expect(page.locator(".notice.error")).to_have_count(1)  # only the refused add
    finally:
        context.close()
        server.stop()
        console = getattr(app.state, "console", None)
        if console is not None:
            console.rates.stop()
