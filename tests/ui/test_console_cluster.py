"""The cluster page against a real three-broker cluster (ZooKeeper): racks, the controller,
and a partition that lost a replica shown under-replicated (issue 26: brokers and partition
leaders/ISR with under-replicated highlighted)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hub.rest.server import RestServer
from hub.runtime.config import WorkerConfig
from sluice.web import build_app
from tests.broker.cluster.cluster import Cluster, ClusterBroker
from tests.fixtures.browser import screenshot
from tests.ui.conftest import ConfigOnlyHerder

expect: Any
try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips with the reason
    expect = None


@pytest.fixture
def racked_cluster(tmp_path: Path, zk_chroot: str) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path, zk_chroot)
    cluster.brokers = {
        i: ClusterBroker(tmp_path / f"broker{i}", i, zk_chroot, "-o", f"broker.rack=rack-{i}")
        for i in range(1, 4)
    }
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def test_cluster_page_shows_racks_controller_and_under_replicated_partitions(
    racked_cluster: Cluster, browser: Any
) -> None:
    racked_cluster.create_topic("replicated", partitions=3, rf=3)
    bootstrap = racked_cluster.bootstrap
    racked_cluster.brokers[3].stop()  # its replicas drop out of every ISR
    for p in range(3):
        racked_cluster.wait(lambda p=p: 3 not in racked_cluster.isr("replicated", p), "ISR shrink")
    config = WorkerConfig.from_mapping({"bootstrap.servers": bootstrap, "rest.auth.token": "c"})
    app = build_app(ConfigOnlyHerder(config), config)
    server = RestServer(app, "127.0.0.1", 0)
    server.start()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    try:
        assert page.request.post(f"{server.url}/console/login", data={"token": "c"}).ok
        page.goto(f"{server.url}/ui/#/cluster")
        brokers = page.get_by_role("table", name="Brokers")
        expect(brokers.locator("tbody tr")).to_have_count(2)
        expect(brokers).to_contain_text("rack-1")
        expect(brokers).to_contain_text("controller")
        partitions = page.get_by_role("table", name="Partitions")
        rows = partitions.locator("tbody tr.warn")
        expect(rows).to_have_count(3)
        expect(rows.first).to_contain_text("under-replicated")
        expect(page.get_by_text("3 under-replicated")).to_be_visible()
        page.get_by_label("Only under-replicated or offline").check()
        expect(partitions.locator("tbody tr")).to_have_count(3)
        screenshot(page, "cluster-under-replicated")
        page.goto(f"{server.url}/ui/#/topics/replicated?tab=partitions")
        expect(page.get_by_role("table", name="Partitions").locator("tr.warn")).to_have_count(3)
        page.goto(f"{server.url}/ui/#/")
        expect(page.locator(".stat.bad", has_text="Under-replicated")).to_contain_text("3")
    finally:
        context.close()
        server.stop()
        console = getattr(app.state, "console", None)
        if console is not None:
            console.rates.stop()
