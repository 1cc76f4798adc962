"""The Prometheus text parser, and PrometheusScrapeTask against a real /metrics endpoint
(driven directly with an in-test SourceTaskContext and clock)."""

from __future__ import annotations

import math

import pytest

from connectors.http import prometheus
from connectors.http.scrape_task import PrometheusScrapeTask
from tests.connectors.http.api_server import ApiServer
from tests.connectors.http.support import Clock, Context, api_fixture  # noqa: F401

EXPOSITION = """\
# HELP http_requests_total The total number of HTTP requests.
# TYPE http_requests_total counter
http_requests_total{method="post",code="200"} 1027 1395066363000
http_requests_total{method="post",code="400"}    3 1395066363000

# Escaping in label values:
msdos_file_access_time_seconds{path="C:\\\\DIR\\\\FILE.TXT",\
error="Cannot find file:\\n\\"FILE.TXT\\""} 1.458255915e9

# Minimalistic line:
metric_without_timestamp_and_labels 12.47

# A weird metric from before the epoch:
something_weird{problem="division by zero"} +Inf -3982045

# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{le="0.05"} 24054
http_request_duration_seconds_bucket{le="+Inf"} 144320
http_request_duration_seconds_sum 53423
http_request_duration_seconds_count 144320
"""


def test_parses_the_reference_exposition() -> None:
    samples = list(prometheus.parse(EXPOSITION))
    assert len(samples) == 9
    first = samples[0]
    assert (first.name, first.labels, first.value, first.timestamp_ms, first.type) == (
        "http_requests_total",
        {"method": "post", "code": "200"},
        1027.0,
        1395066363000,
        "counter",
    )
    assert samples[2].labels == {
        "path": "C:\\DIR\\FILE.TXT",
        "error": 'Cannot find file:\n"FILE.TXT"',
    }
    assert samples[3].name == "metric_without_timestamp_and_labels" and samples[3].labels == {}
    assert math.isinf(samples[4].value) and samples[4].timestamp_ms == -3982045
    assert samples[6].labels == {"le": "+Inf"} and samples[6].type == "histogram"
    assert samples[8].type == "histogram"


@pytest.mark.parametrize("line", ['bad{x="1" 3', "1abc 3", "name", "n{x=1} 2", "n 1 2 3"])
def test_malformed_lines_are_reported(line: str) -> None:
    with pytest.raises(ValueError, match="line 1"):
        list(prometheus.parse(line))


def test_scrape_emits_one_record_per_sample_plus_up(api: ApiServer) -> None:
    api.metrics = EXPOSITION
    down = "http://127.0.0.1:9/metrics"
    config = {"name": "scr", "topic": "metrics", "targets": f"{api.url}/metrics,{down}",
              "job": "node", "scrape.interval.ms": "10000"}  # fmt: skip
    clock = Clock()
    task = PrometheusScrapeTask(Context(config), clock=clock, wait=clock.wait)
    task.start(config)
    try:
        records = task.poll() or []
        port = api.url.rsplit(":", 1)[1]
        values = [r.value for r in records]
        assert len(values) == 9  # 8 finite samples + up; +Inf dropped
        assert values[0] == {
            "name": "http_requests_total",
            "tags": {"instance": f"127.0.0.1:{port}", "job": "node",
                     "method": "post", "code": "200"},
            "value": 1027.0, "time": "2014-03-17T14:26:03.000Z", "target": f"{api.url}/metrics",
            "type": "counter",
        }  # fmt: skip
        assert records[0].key == (
            f"http_requests_total,code=200,instance=127.0.0.1:{port},job=node,method=post"
        )
        assert records[0].topic == "metrics" and records[0].timestamp == 1395066363000
        assert values[-1]["name"] == "up" and values[-1]["value"] == 1.0
        assert records[3].timestamp > 1_700_000_000_000  # no timestamp given: the scrape time
        assert values[3]["time"].endswith("Z") and values[3]["time"] > "2023"
        # the dead target: just up=0, the task goes on
        dead = task.poll() or []
        assert [(r.value["name"], r.value["value"], r.value["target"]) for r in dead] == [
            ("up", 0.0, down)
        ]
        # next round only after the interval
        assert task.poll() is None
        assert sum(clock.waited) == pytest.approx(1.0)
        clock.now += 10
        assert len(task.poll() or []) == 9
    finally:
        task.stop()
