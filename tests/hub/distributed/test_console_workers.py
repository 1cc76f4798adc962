"""The console's Workers page over a real group of two ``sluice connect`` workers: each worker,
the leader marked, and the connectors and tasks each runs (issue 20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fixtures.broker import wait_until
from tests.fixtures.browser import screenshot
from tests.fixtures.workers import TOKEN

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips with the reason
    expect = None


def test_workers_page_lists_each_worker_and_what_it_runs(
    group_of: Any, browser: Any, tmp_path: Path
) -> None:
    group = group_of(2)
    for i in range(2):
        source = tmp_path / f"in{i}.txt"
        source.write_text("x\n")
        config = {"connector.class": "FileStreamSource", "file": str(source), "topic": f"w{i}"}
        group.workers[0].call("POST", "/connectors", {"name": f"src{i}", "config": config})

    def settled() -> dict[str, Any] | None:
        view = group.stable(2)
        return view if view and sum(len(u) for u in view["members"].values()) == 4 else None

    view: Any = wait_until(settled, 60, "both connectors and their tasks assigned")
    via = group.non_leader()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    try:
        assert page.request.post(f"{via.url}/console/login", data={"token": TOKEN}).ok
        page.goto(f"{via.url}/ui/#/workers")
        table = page.get_by_role("table", name="Workers")
        expect(table.locator("tbody tr")).to_have_count(2)
        leader_row = table.locator("tbody tr").filter(has_text=view["leader_url"])
        expect(leader_row).to_contain_text("LEADER")
        for url, units in view["members"].items():
            row = table.locator("tbody tr").filter(has_text=url)
            for unit in units:
                expect(row).to_contain_text(unit)
            # each unit with its state from the status topic; none failed
            expect(row.locator(".unit .badge")).to_have_count(len(units))
            expect(row.locator(".unit .badge", has_text="RUNNING")).to_have_count(len(units))
            expect(row.locator("td").nth(3)).to_have_text("0")  # Failed
        expect(page.get_by_text(f"This page is served by {via.url}")).to_be_visible()
        screenshot(page, "workers")
    finally:
        context.close()
