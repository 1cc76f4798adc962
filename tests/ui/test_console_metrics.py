"""The connector page's throughput reads the hub's own metrics collectors: over a real
``sluice up`` with a file source, the console's totals equal the lines written and the
counters ``GET /metrics`` shows."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import HubProcess
from tests.fixtures.prometheus import scrape, value


def _totals(hub: HubProcess, name: str) -> dict[str, float]:
    url = f"{hub.rest_url}/console/api/connectors/{name}/throughput"
    with urllib.request.urlopen(urllib.request.Request(url, headers=hub.auth_headers)) as resp:
        return dict(json.loads(resp.read()))


def test_connector_throughput_totals(hub: HubProcess, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line-{i}\n" for i in range(120)))
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": "t"}
    assert hub.request("POST", "/connectors", {"name": "src", "config": config})[0] == 201
    wait_until(lambda: _totals(hub, "src")["written"] == 120, 20, "120 records written")
    totals = _totals(hub, "src")
    assert totals["polled"] == 120 and totals["read"] == 0 and totals["sent"] == 0
    samples = scrape(f"{hub.rest_url}/metrics", hub.auth_headers)
    write = "kafka_connect_source_task_metrics_source_record_write_total"
    assert value(samples, write, connector="src", task="0") == totals["written"]
    unknown = _totals(hub, "nope")
    assert [unknown[k] for k in ("polled", "written", "read", "sent")] == [0, 0, 0, 0]
