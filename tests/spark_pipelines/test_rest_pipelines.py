"""``/pipelines`` over a fake herder; runs are a stub ``python`` so no Spark starts here.

The stub stands in for ``python -m sluice pipelines run``: it appends a progress line to the
``--progress-file`` it is given and exits 0, or, for a pipeline whose config asks for it,
waits for SIGTERM — enough to check run/stop/status/history through the HTTP layer. The real
command is exercised by the CLI test.
"""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from fastapi.testclient import TestClient

import spark_pipelines.templates as templates
from hub.pipelines import PipelinesService
from hub.rest import create_app
from sluice.node import Node, NodeConfig
from tests.fixtures.broker import wait_until
from tests.fixtures.rest_auth import authed, secured
from tests.hub.rest.fake_herder import FakeHerder

STUB = """#!/bin/sh
prog=""
while [ $# -gt 0 ]; do
  [ "$1" = "--progress-file" ] && prog="$2"
  [ "$1" = "--config" ] && cfg="$2"
  shift
done
echo '{"batchId": 0, "numInputRows": 7}' >> "$prog"
if grep -q linger "$cfg"; then trap 'exit 143' TERM; while :; do sleep 0.05; done; fi
exit 0
"""

CONFIG = {
    "input": {"bootstrap_servers": "127.0.0.1:9", "topics": ["raw"]},
    "checkpoint_dir": "/tmp/ck",
    "output_topic": "counts",
}


@pytest.fixture
def client(tmp_path: Path):
    stub = tmp_path / "python-stub"
    stub.write_text(STUB)
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    scheduler = BackgroundScheduler(timezone="UTC")
    service = PipelinesService(tmp_path / "pipelines", templates, scheduler, python=str(stub))
    scheduler.start()
    app = create_app(FakeHerder(), secured(), pipelines=service)
    with authed(app, raise_server_exceptions=False) as c:
        yield c
    service.close()
    scheduler.shutdown(wait=False)


def _finished(client: TestClient, name: str) -> dict | None:
    body = client.get(f"/pipelines/{name}").json()
    return body if body["runs"] and body["runs"][-1]["state"] != "RUNNING" else None


def test_create_run_status_delete(client: TestClient, tmp_path: Path):
    spec = {
        "name": "logs",
        "template": "log_aggregation",
        "config": CONFIG,
        "schedule": "*/5 * * * *",
    }
    created = client.post("/pipelines", json=spec)
    assert created.status_code == 201, created.text
    assert created.json()["state"] == "IDLE" and created.json()["next_run"]
    assert client.post("/pipelines", json=spec).status_code == 409

    listed = client.get("/pipelines").json()
    assert [(p["name"], p["template"], p["schedule"]) for p in listed] == [
        ("logs", "log_aggregation", "*/5 * * * *")
    ]

    run = client.post("/pipelines/logs/run")
    assert run.status_code == 202 and run.json()["state"] == "RUNNING"
    body = wait_until(lambda: _finished(client, "logs"), 10, "the run to finish")
    assert body["runs"][-1]["state"] == "SUCCEEDED" and body["runs"][-1]["exit_code"] == 0
    assert body["last_progress"] == {"batchId": 0, "numInputRows": 7}

    # Definitions and history survive a restart of the service (the hub).
    again = PipelinesService(tmp_path / "pipelines", templates, BackgroundScheduler())
    assert again.status("logs")["runs"][-1]["state"] == "SUCCEEDED"
    assert again.scheduler.get_job("logs") is not None

    assert client.delete("/pipelines/logs").status_code == 204
    assert client.get("/pipelines/logs").status_code == 404


def test_stop_a_running_pipeline_and_conflicts(client: TestClient):
    config = {**CONFIG, "query_name": "linger"}
    assert (
        client.put(
            "/pipelines/slow", json={"template": "log_aggregation", "config": config}
        ).status_code
        == 201
    )
    assert client.post("/pipelines/slow/run").status_code == 202
    assert client.post("/pipelines/slow/run").status_code == 409
    began = time.monotonic()
    assert client.post("/pipelines/slow/stop").json() == {"stopped": True}
    assert time.monotonic() - began < 10
    body = wait_until(lambda: _finished(client, "slow"), 10, "the run to end")
    assert body["runs"][-1]["state"] == "STOPPED"
    assert client.post("/pipelines/slow/stop").json() == {"stopped": False}


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"name": "x", "template": "nope", "config": {}}, "template"),
        ({"name": "x", "template": "log_aggregation", "config": {"input": {}}}, "checkpoint_dir"),
        (
            {"name": "x", "template": "log_aggregation", "config": CONFIG, "schedule": "every day"},
            "schedule",
        ),
    ],
)
def test_invalid_specs_are_400_naming_the_field(client: TestClient, spec: dict, field: str):
    resp = client.post("/pipelines", json=spec)
    assert resp.status_code == 400, resp.text
    assert field in str(resp.json()), resp.json()


def test_templates_list_their_config_schema(client: TestClient):
    names = {t["name"]: t for t in client.get("/pipelines/templates").json()}
    assert set(names) == {
        "log_aggregation",
        "metrics_rollup",
        "cdc_to_table",
        "clean_dedupe_enrich",
        "sql",
    }
    assert "input" in names["log_aggregation"]["config_schema"]["properties"]


def test_saved_schedules_resume_when_the_hub_starts(tmp_path: Path):
    first = PipelinesService(tmp_path / "p", templates, BackgroundScheduler(timezone="UTC"))
    first.create("nightly", "log_aggregation", CONFIG, schedule="0 3 * * *")
    node = Node(NodeConfig(pipelines_dir=tmp_path / "p"))
    node.start_pipelines()  # what a hub's start does, before any request
    try:
        service = node.pipelines
        assert node.scheduler.running and service.scheduler.get_job("nightly") is not None
    finally:
        node.stop()


def test_secrets_in_pipeline_configs_are_hidden_and_kept(client: TestClient):
    """Kafka client secrets and a table URL's password come back as [hidden]; sending the
    shown config back keeps them; a new pipeline cannot use [hidden]."""
    config = {
        **CONFIG,
        "input": {**CONFIG["input"], "kafka": {"sasl.jaas.config": "PlainLoginModule pw=k4fka"}},
        "output_table": {"url": "postgresql+psycopg://app:db-pa55@db:5432/m", "table": "m"},
    }
    created = client.post(
        "/pipelines", json={"name": "m", "template": "metrics_rollup", "config": config}
    )
    assert created.status_code == 201, created.text
    for text in (created.text, client.get("/pipelines/m").text):
        assert "k4fka" not in text and "db-pa55" not in text
    shown = client.get("/pipelines/m").json()["config"]
    assert shown["input"]["kafka"]["sasl.jaas.config"] == "[hidden]"
    assert shown["output_table"]["url"] == "postgresql+psycopg://app:[hidden]@db:5432/m"
    shown["watermark"] = "5 minutes"
    put = client.put("/pipelines/m", json={"template": "metrics_rollup", "config": shown})
    assert put.status_code == 200, put.text
    stored = client.app.state.pipelines.pipelines["m"].config  # type: ignore[attr-defined]
    assert stored["input"]["kafka"]["sasl.jaas.config"] == "PlainLoginModule pw=k4fka"
    assert stored["output_table"]["url"].endswith("app:db-pa55@db:5432/m")
    assert stored["watermark"] == "5 minutes"
    fresh = {"name": "n", "template": "metrics_rollup", "config": shown}
    assert client.post("/pipelines", json=fresh).status_code == 400


def test_table_files_outside_the_roots_refused(client: TestClient, tmp_path: Path, allowed_roots):
    allowed_roots(tmp_path)
    table = {"url": "sqlite:////etc/cron.d/metrics.db", "table": "m"}
    config = {**CONFIG, "checkpoint_dir": str(tmp_path / "ck"), "output_table": table}
    spec = {"name": "t", "template": "metrics_rollup", "config": config}
    response = client.post("/pipelines", json=spec)
    assert response.status_code == 400 and "file.allowed.paths" in response.text
    table["url"] = f"sqlite:///{tmp_path}/metrics.db"
    assert client.post("/pipelines", json=spec).status_code == 201


def test_kafka_options_that_load_code_refused(client: TestClient):
    config = {**CONFIG, "input": {**CONFIG["input"], "kafka": {"plugin.library.paths": "x.so"}}}
    response = client.post("/pipelines", json={"name": "k", "template": "log_aggregation",
                                               "config": config})  # fmt: skip
    assert response.status_code == 400 and "plugin.library.paths" in response.text
