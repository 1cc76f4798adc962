"""User SQL in pipelines reaches neither the OS nor the catalog (spark_pipelines/sql_guard.py).

Through the REST API (POST /pipelines -> 400, nothing saved, nothing run) and in the run itself
(``templates.sql.start`` refuses before ``spark.sql``). The parser is the session fixture's JVM
(one Spark per test session); the control test shows the TRANSFORM statement does run a shell
when Spark gets it, so "no marker file" below means the guard stopped it.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from fastapi.testclient import TestClient

import spark_pipelines.templates as templates
from hub.pipelines import PipelinesService
from hub.rest import create_app
from tests.fixtures.broker import wait_until
from tests.fixtures.rest_auth import authed, secured
from tests.hub.rest.fake_herder import FakeHerder

pytest.importorskip("pyspark")
pytestmark = pytest.mark.timeout(300)

ARGS_STUB = """#!/bin/sh
echo "$@" > "$(dirname "$0")/run-args"
exit 0
"""


def transform(marker: Path) -> str:
    return f"SELECT TRANSFORM(value_str) USING 'sh -c \"touch {marker}\"' AS (out) FROM events"


def sql_pipeline(statement: str, tmp_path: Path, **more: Any) -> dict[str, Any]:
    return {
        "name": "p",
        "template": "sql",
        "config": {
            "views": {"events": {"input": {"bootstrap_servers": "127.0.0.1:9", "topics": ["e"]}}},
            "checkpoint_dir": str(tmp_path / "ck"),
            "statement": statement,
            "output_topic": "out",
            **more,
        },
    }


@pytest.fixture
def client(spark: Any, tmp_path: Path, allowed_roots: Any) -> Iterator[TestClient]:
    """The REST app with a pipelines service whose runs are a stub that records its args."""
    allowed_roots(tmp_path)  # what the worker sets from file.allowed.paths
    stub = tmp_path / "python-stub"
    stub.write_text(ARGS_STUB)
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    scheduler = BackgroundScheduler(timezone="UTC")
    service = PipelinesService(
        tmp_path / "pipelines", templates, scheduler, python=str(stub),
        allowed_paths=[str(tmp_path)],  # what sluice.node passes: the worker's roots
    )  # fmt: skip
    app = create_app(FakeHerder(), secured(), pipelines=service)
    with authed(app, raise_server_exceptions=False) as c:
        yield c
    service.close()


def test_control_spark_runs_the_transform_command(spark: Any, tmp_path: Path) -> None:
    marker = tmp_path / "control-marker"
    spark.createDataFrame([("x",)], ["value_str"]).createOrReplaceTempView("events")
    spark.sql(transform(marker)).collect()
    assert marker.exists()  # the attack is real: without the guard a shell runs


@pytest.mark.parametrize(
    "statement, reason",
    [
        ("TRANSFORM", "TRANSFORM"),
        ("ADD JAR /tmp/evil.jar", "ADD JAR"),
        ("CREATE FUNCTION evil AS 'com.evil.Udf' USING JAR '/tmp/evil.jar'", "CREATE FUNCTION"),
        ("CREATE TEMPORARY FUNCTION evil AS 'com.evil.Udf'", "CREATE TEMPORARY FUNCTION"),
        ("SET spark.sql.warehouse.dir=/etc", "SET"),
        ("LOAD DATA LOCAL INPATH '/etc/passwd' INTO TABLE t", "LOAD DATA"),
        ("INSERT OVERWRITE DIRECTORY '/tmp/out' SELECT * FROM events", "DIRECTORY"),
        ("CREATE TABLE t LOCATION '/tmp/t' AS SELECT * FROM events", "CREATE TABLE"),
        ("SELECT reflect('java.lang.Runtime', 'getRuntime') FROM events", "reflect"),
        ("SELECT * FROM events JOIN text.`/etc/passwd` p ON true", "/etc/passwd"),
        ("SELECT * FROM read_files('/etc')", "read_files"),
        ("SELECT * FROM events WHERE value_str IN (SELECT * FROM db.secrets)", "db.secrets"),
        ("SELECT * FROM events; DROP TABLE events", "not valid Spark SQL"),
    ],
)
def test_statements_reaching_the_os_or_catalog_refused_with_400(
    client: TestClient, tmp_path: Path, statement: str, reason: str
) -> None:
    marker = tmp_path / "marker"
    statement = transform(marker) if statement == "TRANSFORM" else statement
    response = client.post("/pipelines", json=sql_pipeline(statement, tmp_path))
    assert response.status_code == 400, response.text
    body = response.json()
    assert reason in " ".join(body["errors"]["statement"]), body
    assert client.get("/pipelines").json() == []  # not saved, so it can never run
    assert client.put("/pipelines/p", json=sql_pipeline(statement, tmp_path)).status_code == 400
    assert not marker.exists()


def test_a_plain_query_is_accepted_and_runs_with_the_roots(
    client: TestClient, tmp_path: Path
) -> None:
    statement = (
        "WITH hits AS (SELECT key, upper(value_str) AS v FROM events WHERE value_str LIKE 'a%') "
        "SELECT key, to_json(named_struct('v', v, 'n', length(v))) AS value FROM hits"
    )
    response = client.post("/pipelines", json=sql_pipeline(statement, tmp_path))
    assert response.status_code == 201, response.text
    assert client.post("/pipelines/p/run").status_code == 202
    wait_until(lambda: (tmp_path / "run-args").exists(), 10, "the run to start")
    args = (tmp_path / "run-args").read_text()
    assert f"--allowed-paths {tmp_path}" in args  # the run re-checks against the same roots


def test_the_run_refuses_before_spark_sees_the_statement(spark: Any, tmp_path: Path) -> None:
    """A definition edited on disk (or saved before this check existed) still cannot run."""
    from spark_pipelines import sql_guard
    from spark_pipelines.templates import sql

    marker = tmp_path / "run-marker"
    config = sql.Config.model_validate(sql_pipeline(transform(marker), tmp_path)["config"])
    with pytest.raises(sql_guard.StatementRefused, match="TRANSFORM"):
        sql.start(spark, config, lambda writer: writer)
    assert not marker.exists()


@pytest.mark.parametrize(
    "field, value",
    [
        ("checkpoint_dir", "/etc/cron.d/sluice"),
        ("checkpoint_dir", "{tmp}/../elsewhere"),
        ("checkpoint_dir", "file:///etc/sluice"),
        ("output_path", "/var/spool/cron/out"),
    ],
)
def test_pipeline_paths_outside_the_roots_refused(
    client: TestClient, tmp_path: Path, field: str, value: str
) -> None:
    spec = sql_pipeline("SELECT * FROM events", tmp_path)
    spec["config"][field] = value.format(tmp=tmp_path)
    if field == "output_path":
        del spec["config"]["output_topic"]
    response = client.post("/pipelines", json=spec)
    assert response.status_code == 400, response.text
    assert "file.allowed.paths" in response.text and field in response.text


def test_remote_locations_are_not_local_paths(client: TestClient, tmp_path: Path) -> None:
    spec = sql_pipeline("SELECT * FROM events", tmp_path)
    spec["config"]["checkpoint_dir"] = "hdfs://namenode:8020/sluice/ck"
    assert client.post("/pipelines", json=spec).status_code == 201
