"""HttpPollTask against a real HTTP server (tests/connectors/http/api_server.py), driven directly
with an in-test SourceTaskContext and an injected clock (no worker, no sleeps)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from connectors.http._client import retry_after_seconds
from connectors.http._schedule import Schedule
from connectors.http.poll_task import HttpPollTask
from hub.api import ConnectError, SourceRecord
from tests.connectors.http.api_server import ApiServer
from tests.connectors.http.support import Clock, Context, api_fixture  # noqa: F401

ITEMS = [{"id": i, "updated_at": f"2026-01-01T00:00:{i:02d}Z"} for i in range(10)]


class Poller:
    """A started task, its context (committed offsets) and clock."""

    def __init__(self, config: dict[str, Any], ctx: Context | None = None) -> None:
        self.config = config
        self.ctx = ctx or Context(config)
        self.clock = Clock()
        self.task = HttpPollTask(self.ctx, clock=self.clock, wait=self.clock.wait)
        self.task.start(config)

    def run_once(self, max_calls: int = 200) -> list[SourceRecord]:
        """Calls poll() until one scheduled poll (all its pages) finished; acks every record."""
        out: list[SourceRecord] = []
        started = False
        for _ in range(max_calls):
            started = started or self.clock.now >= self.task._due
            records = self.task.poll() or []
            self.ctx.ack(records)
            out += records
            if started and self.task._page is None and self.clock.now < self.task._due:
                return out
        raise AssertionError("the poll never finished")

    def restart(self) -> Poller:
        self.task.stop()
        return Poller(self.config, self.ctx)


@pytest.fixture
def poller(api: ApiServer):
    made: list[Poller] = []

    def make(path: str, **config: str) -> Poller:
        cfg = {"name": "test-poll", "topic": "t", "url": api.url + path, "records.pointer": "/data",
               "poll.interval.ms": "60000", "retry.backoff.ms": "500"}  # fmt: skip
        cfg.update(config)
        p = Poller(cfg)
        made.append(p)
        return p

    yield make
    for p in made:
        p.task.stop()


@pytest.mark.parametrize(
    ("path", "config", "requests"),
    [
        ("/page", {"pagination.type": "page", "pagination.limit": "3"}, 4),
        ("/offset", {"pagination.type": "offset", "pagination.limit": "3"}, 4),
        ("/cursor", {"pagination.type": "cursor"}, 4),
        ("/link", {"pagination.type": "link_header"}, 4),
        ("/next", {"pagination.type": "next_url", "pagination.next.pointer": "/next"}, 4),
    ],
)
def test_every_pagination_style_reads_every_page_once(
    api: ApiServer, poller: Any, path: str, config: dict[str, str], requests: int
) -> None:
    api.items = list(ITEMS)
    p = poller(path, **config)
    records = p.run_once()
    assert [r.value["id"] for r in records] == list(range(10))
    assert len(api.requests) == requests
    # the next scheduled poll reads everything again (no cursor configured)
    p.clock.now = p.task._due
    assert len(p.run_once()) == 10


@pytest.mark.parametrize("style", ["page", "offset"])
def test_page_and_offset_stop_on_an_empty_page(api: ApiServer, poller: Any, style: str) -> None:
    api.items = ITEMS[:9]  # an exact multiple of the page size: the 4th page is empty
    p = poller(f"/{style}", **{"pagination.type": style, "pagination.limit": "3"})
    assert len(p.run_once()) == 9
    assert len(api.requests) == 4


def test_ndjson_key_and_timestamp_fields(api: ApiServer, poller: Any) -> None:
    api.items = ITEMS[:3]
    p = poller("/ndjson", **{"records.format": "ndjson", "records.pointer": "",
                             "key.field": "id", "timestamp.field": "updated_at"})  # fmt: skip
    records = p.run_once()
    assert [r.key for r in records] == [0, 1, 2]
    assert records[1].timestamp == 1767225601000  # 2026-01-01T00:00:01Z
    assert records[0].value == ITEMS[0]


def test_response_time_is_the_timestamp_without_a_field(api: ApiServer, poller: Any) -> None:
    api.items = ITEMS[:1]
    record = poller("/page").run_once()[0]
    assert record.timestamp and record.timestamp > 1_700_000_000_000


def test_incremental_cursor_boundary_rule(api: ApiServer, poller: Any) -> None:
    """inclusive: the API returns >= cursor; equal values already sent are skipped, new equal
    values are not lost, and a restart from the committed offset repeats nothing."""
    api.items = [dict(i) for i in ITEMS[:5]]
    cfg = {"params": '{"since": "${cursor}"}', "pagination.type": "cursor",
           "incremental.field": "updated_at", "key.field": "id"}  # fmt: skip
    p = poller("/since", **cfg)
    assert [r.key for r in p.run_once()] == [0, 1, 2, 3, 4]
    assert api.requests[0][0].endswith("since=")
    last = ITEMS[4]["updated_at"]
    assert p.ctx.offset({"url": p.config["url"]}) == {"cursor": last, "seen": ["4"]}
    # a new record with the same updated_at as the last one, and a newer one
    api.items += [{"id": 50, "updated_at": last}, {"id": 60, "updated_at": "2026-01-01T00:01:00Z"}]
    p.clock.now = p.task._due
    assert [r.key for r in p.run_once()] == [50, 60]
    assert f"since={last.replace(':', '%3A')}" in api.requests[-1][0]
    # restart from the committed offset: nothing new, nothing repeated
    p2 = p.restart()
    assert p2.run_once() == []
    api.items.append({"id": 70, "updated_at": "2026-01-01T00:01:00Z"})
    p2.clock.now = p2.task._due
    assert [r.key for r in p2.run_once()] == [70]


def test_incremental_restart_mid_poll_resumes_after_the_last_acked(api: ApiServer) -> None:
    api.items = [dict(i) for i in ITEMS]
    cfg = {"name": "t", "topic": "t", "url": api.url + "/since", "records.pointer": "/data",
           "params": '{"since": "${cursor}"}', "pagination.type": "cursor",
           "incremental.field": "updated_at"}  # fmt: skip
    first = Poller(cfg)
    page1 = first.task.poll() or []
    first.ctx.ack(page1[:2])  # a crash after two acknowledged records
    first.task.stop()
    second = Poller(cfg, first.ctx)
    assert [r.value["id"] for r in second.run_once()] == list(range(2, 10))


def test_429_honours_retry_after(api: ApiServer, poller: Any) -> None:
    api.scripts["r"] = [(429, {"Retry-After": "7"}, "slow down"),
                        (200, {}, '{"data": [{"id": 1}]}')]  # fmt: skip
    p = poller("/script/r")
    assert [r.value for r in p.run_once()] == [{"id": 1}]
    assert sum(p.clock.waited) == pytest.approx(7)
    assert max(p.clock.waited) <= 1.0  # waits in slices: pause/stop are honoured meanwhile


def test_5xx_and_network_errors_retry_with_backoff(api: ApiServer, poller: Any) -> None:
    api.scripts["f"] = [(500, {}, "oops"), (502, {}, "bad gateway"),
                        (200, {}, '{"data": [{"id": 1}]}')]  # fmt: skip
    p = poller("/script/f")
    assert len(p.run_once()) == 1
    assert sum(p.clock.waited) == pytest.approx(0.5 + 1.0)


def test_permanently_failing_endpoint_fails_with_status_and_body(
    api: ApiServer, poller: Any
) -> None:
    api.scripts["dead"] = [(500, {}, "database is on fire")]
    p = poller("/script/dead", **{"retry.max.attempts": "3"})
    with pytest.raises(ConnectError, match=r"HTTP 500 .*database is on fire"):
        p.run_once()
    assert len(api.requests) == 3
    assert sum(p.clock.waited) == pytest.approx(0.5 + 1.0)  # backoff, never a tight loop


def test_client_errors_fail_at_once(api: ApiServer, poller: Any) -> None:
    with pytest.raises(ConnectError, match="HTTP 404"):
        poller("/nothing-here").run_once()
    assert len(api.requests) == 1


def test_unreachable_endpoint_fails_after_retries(poller: Any) -> None:
    p = poller("/x", **{"url": "http://127.0.0.1:9/x", "retry.max.attempts": "2"})
    with pytest.raises(ConnectError, match="giving up after 2 attempts"):
        p.run_once()


@pytest.mark.parametrize(
    ("auth", "check"),
    [
        ({"auth.type": "bearer", "auth.token": "s3"},
         lambda path, h: h["Authorization"] == "Bearer s3"),
        ({"auth.type": "basic", "auth.username": "u", "auth.password": "p"},
         lambda path, h: h["Authorization"] == "Basic " + base64.b64encode(b"u:p").decode()),
        ({"auth.type": "api_key", "auth.api.key.value": "k"},
         lambda path, h: h["X-API-Key"] == "k"),
        ({"auth.type": "api_key", "auth.api.key.value": "k", "auth.api.key.in": "query",
          "auth.api.key.name": "key"}, lambda path, h: "key=k" in path),
        ({"headers": '{"X-Tenant": "acme"}'}, lambda path, h: h["X-Tenant"] == "acme"),
    ],
)  # fmt: skip
def test_auth_and_headers_are_sent(api: ApiServer, poller: Any, auth: dict, check: Any) -> None:
    api.items = ITEMS[:1]
    poller("/page", **auth).run_once()
    path, headers = api.requests[0]
    assert check(path, headers)


def test_retry_after_forms() -> None:
    assert retry_after_seconds("120") == 120
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_schedules() -> None:
    interval = Schedule(10_000, None)
    assert interval.first(5.0) == 5.0
    assert interval.after(started=5.0, now=7.0) == 15.0  # fixed rate
    assert interval.after(started=5.0, now=30.0) == 30.0  # overran: next one at once
    cron = Schedule(10_000, "* * * * *")
    import time

    now = time.monotonic()
    assert now <= cron.first(now) <= now + 60.5
