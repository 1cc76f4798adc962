"""Without the ``spark`` extra, everything that needs Spark says ``pip install 'sluice[spark]'``.

pyspark is hidden by a ``None`` in ``sys.modules`` (Python's own "known missing" marker, which
makes ``import pyspark`` raise ModuleNotFoundError); in-process where the check reads it, in a
child process where the code under test imports for real. The fresh-venv install test
(tests/test_install.py) checks the same messages with nothing hidden.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from apscheduler.schedulers.background import BackgroundScheduler

import spark_pipelines.templates as templates
from hub.pipelines import PipelinesService, PipelinesUnavailableError
from hub.rest import create_app
from spark_pipelines.errors import MissingExtraError
from spark_pipelines.extra import missing_spark_modules, require_spark
from tests.fixtures.rest_auth import authed, secured
from tests.hub.rest.fake_herder import FakeHerder

HINT = "pip install 'sluice[spark]'"
CONFIG = {
    "input": {"bootstrap_servers": "127.0.0.1:9", "topics": ["raw"]},
    "checkpoint_dir": "/tmp/ck",
    "output_topic": "counts",
}


def _hide(*modules: str) -> str:
    return "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)


@pytest.fixture
def no_pyspark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)


def test_installed_here() -> None:
    assert missing_spark_modules() == []
    assert templates.unavailable() is None


def test_require_names_the_missing_module_and_the_extra(no_pyspark: None) -> None:
    assert missing_spark_modules() == ["pyspark"]
    with pytest.raises(MissingExtraError) as caught:
        require_spark("the thing")
    assert str(caught.value) == f"the thing needs Spark (pyspark not installed): {HINT}"
    assert isinstance(caught.value, ImportError)
    assert HINT in (templates.unavailable() or "")


def test_hub_refuses_a_run_with_501(no_pyspark: None, tmp_path: Path) -> None:
    scheduler = BackgroundScheduler(timezone="UTC")
    service = PipelinesService(tmp_path / "pipelines", templates, scheduler)
    app = create_app(FakeHerder(), secured(), pipelines=service)
    with authed(app, raise_server_exceptions=False) as client:
        spec = {"name": "logs", "template": "log_aggregation", "config": CONFIG}
        assert client.post("/pipelines", json=spec).status_code == 201  # a definition is fine
        ran = client.post("/pipelines/logs/run")
        assert ran.status_code == 501, ran.text
        assert HINT in ran.json()["message"]
        with pytest.raises(PipelinesUnavailableError):
            service.run_now("logs")
        assert client.get("/pipelines/logs").json()["runs"] == []  # no subprocess was started
    service.close()


def test_hub_refuses_an_uncheckable_sql_pipeline(no_pyspark: None, tmp_path: Path) -> None:
    service = PipelinesService(tmp_path / "pipelines", templates, BackgroundScheduler())
    app = create_app(FakeHerder(), secured(), pipelines=service)
    config = {
        "views": {"events": {"input": {"bootstrap_servers": "127.0.0.1:9", "topics": ["raw"]}}},
        "checkpoint_dir": str(tmp_path / "ck"),
        "statement": "SELECT value_str FROM events",
        "output_topic": "out",
    }
    with authed(app, raise_server_exceptions=False) as client:
        spec = {"name": "q", "template": "sql", "config": config}
        refused = client.post("/pipelines", json=spec)
    service.close()
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"]["statement"] == [
        f"checking a sql pipeline's statement needs Spark (pyspark not installed): {HINT}"
    ]


def test_cli_run_says_which_extra(tmp_path: Path) -> None:
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(CONFIG))
    code = _hide("pyspark") + (
        "from sluice.cli import main\n"
        f"sys.argv = ['sluice', 'pipelines', 'run', 'log_aggregation', '--config', {str(cfg)!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert HINT in done.stderr and "Traceback" not in done.stderr


def test_data_source_import_says_which_extra() -> None:
    # numba is optional (the data source falls back to its Python decoder); numpy is not
    code = _hide("numpy") + "import spark_pipelines.datasource.source\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "spark_pipelines.errors.MissingExtraError: the sluice Spark data source needs Spark "
        f"(numpy not installed): {HINT}"
    )
