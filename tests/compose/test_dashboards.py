"""The Grafana dashboards and the Prometheus config in compose/ refer only to metrics the code
exports: every PromQL expression's metric names are looked up in what a real ``sluice up``
(hub with file connectors, its broker with a metrics port) serves after traffic, plus the
connector-specific names of the CDC task and the pipeline families."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import HubProcess, free_port
from tests.fixtures.prometheus import fetch, series_names, value

ROOT = Path(__file__).resolve().parents[2]
DASHBOARDS = ROOT / "compose" / "grafana" / "dashboards"
PROMETHEUS = ROOT / "compose" / "prometheus" / "prometheus.yml"

_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
             "unless", "bool", "offset", "inf", "nan"}  # fmt: skip
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def metric_names(expr: str) -> set[str]:
    """Metric names in a PromQL expression: identifiers that are not functions, keywords,
    label names (inside ``{}`` or ``by (...)``), durations, numbers or template variables."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # range selectors ($__rate_interval included)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in _IDENT.finditer(text):
        name, rest = match.group(), text[match.end() :].lstrip()
        start = match.start()
        if rest.startswith("(") or name in _KEYWORDS or (start and text[start - 1] == "$"):
            continue
        if re.fullmatch(r"\d.*", name):
            continue
        names.add(name)
    return names


def _expressions() -> Iterator[tuple[str, str, str]]:
    for path in sorted(DASHBOARDS.glob("*.json")):
        board = json.loads(path.read_text())
        for panel in board["panels"]:
            for target in panel.get("targets", ()):
                yield path.name, panel["title"], target["expr"]


def test_the_name_extractor() -> None:
    expr = ('histogram_quantile(0.99, sum by (le, request) (rate(a_bucket{request=~"P|F"}'
            '[$__rate_interval]))) / on(instance) b_total or vector(0) - time()')  # fmt: skip
    assert metric_names(expr) == {"a_bucket", "b_total"}


def test_three_dashboards_with_unique_uids() -> None:
    boards = [json.loads(p.read_text()) for p in sorted(DASHBOARDS.glob("*.json"))]
    assert [b["uid"] for b in boards] == ["sluice-broker", "sluice-hub", "sluice-pipelines"]
    for board in boards:
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids)), board["uid"]


def test_prometheus_scrapes_brokers_and_the_hub_with_its_token() -> None:
    config = yaml.safe_load(PROMETHEUS.read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert set(jobs) == {"sluice-broker", "sluice-hub"}
    assert all(j["metrics_path"] == "/metrics" for j in jobs.values())
    assert jobs["sluice-hub"]["authorization"]["type"] == "Bearer"
    assert "authorization" not in jobs["sluice-broker"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[set[str]]:
    """Every name the code exports, scraped from a real ``sluice up`` after traffic."""
    from hub.pipelines.metrics import PipelinesCollector

    tmp = tmp_path_factory.mktemp("dashboards")
    hub = HubProcess(tmp / "hub", {"offset.flush.interval.ms": 100})
    broker_port = free_port()
    hub.extra_args = ("--broker-metrics-port", str(broker_port))
    hub.start()
    try:
        source, sink = tmp / "in.txt", tmp / "out.txt"
        source.write_text("".join(f"line-{i}\n" for i in range(50)))
        for name, config in (
            ("src", {"connector.class": "FileStreamSource", "file": str(source), "topic": "t"}),
            ("snk", {"connector.class": "FileStreamSink", "file": str(sink), "topics": "t"}),
        ):
            assert hub.request("POST", "/connectors", {"name": name, "config": config})[0] == 201
        wait_until(lambda: sink.exists() and len(sink.read_text().splitlines()) == 50, 30, "sink")
        broker_url = f"http://127.0.0.1:{broker_port}/metrics"
        lag = {"consumergroup": "connect-snk", "topic": "t", "partition": "0"}
        wait_until(lambda: value(_parse(fetch(broker_url)), "kafka_consumergroup_lag", **lag)
                   is not None, 10, "the sink group's lag")  # fmt: skip
        names = series_names(fetch(broker_url))
        names |= series_names(fetch(f"{hub.rest_url}/metrics", hub.auth_headers))
    finally:
        assert hub.stop() == 0

    class _NoPipelines:
        pipelines: dict[str, object] = {"p": object()}
        dir = tmp

        def runs(self, name: str) -> list[dict[str, object]]:
            return [{"id": "r1", "state": "RUNNING", "started": 0.0}]

    registry = CollectorRegistry(auto_describe=False)
    registry.register(PipelinesCollector(_NoPipelines()))
    names |= series_names(generate_latest(registry).decode())
    from connectors.postgres_cdc.source_task import PostgresCdcSourceTask

    cdc = PostgresCdcSourceTask(None)  # type: ignore[arg-type]  # metrics() reads attributes
    names |= {f"sluice_connector_task_{name}" for name in cdc.metrics()}
    yield names


def _parse(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    from tests.fixtures.prometheus import parse

    return parse(text)


def _known(name: str, exported: set[str]) -> bool:
    """Exported as a sample, or a family whose samples carry this suffix (a counter or
    histogram with no series yet still has its family)."""
    if name in exported:
        return True
    for suffix in ("_total", "_bucket", "_count", "_sum"):
        if name.endswith(suffix) and name[: -len(suffix)] in exported:
            return True
    return False


def test_every_dashboard_metric_is_exported(exported: set[str]) -> None:
    missing = [
        f"{board} / {title}: {name}"
        for board, title, expr in _expressions()
        for name in sorted(metric_names(expr))
        if not _known(name, exported)
    ]
    assert not missing, "\n".join(missing)
    assert sum(1 for _ in _expressions()) > 40
