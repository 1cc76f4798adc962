"""``sluice connectors`` against a real HTTP server: uvicorn serving the REST app on a free port.

The app is backed by the fake in-memory herder (tests/hub/rest/fake_herder.py), so these tests
cover the command line and its HTTP client end to end over a socket, not the runtime.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hub.connectors_cli import connectors_app
from hub.rest import create_app
from hub.rest.server import RestServer
from sluice import terminal
from tests.fixtures.broker import wait_until
from tests.hub.rest.fake_herder import SINK, SOURCE, FakeHerder

TOKEN = "cli-token"


@pytest.fixture(scope="module")
def served() -> Iterator[RestServer]:
    with RestServer(create_app(FakeHerder(), {"rest.auth.token": TOKEN}), port=0) as running:
        yield running


@pytest.fixture(autouse=True)
def _no_local_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No hub.token of a developer's own ``sluice up`` (./data) leaks into a test."""
    for name in ("SLUICE_REST_TOKEN", "SLUICE_REST_BASIC", "SLUICE_REST_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLUICE_DATA_DIR", str(tmp_path / "no-hub-here"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def herder(served: RestServer) -> FakeHerder:
    fresh = FakeHerder()
    served.app.state.herder = fresh
    return fresh


@pytest.fixture
def sluice(served: RestServer, herder: FakeHerder, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Runs ``sluice connectors ARGS`` against the served app (via SLUICE_REST_URL)."""
    monkeypatch.setenv("SLUICE_REST_URL", served.url)
    monkeypatch.setenv("SLUICE_REST_TOKEN", TOKEN)
    for console in (terminal.out, terminal.err):
        monkeypatch.setattr(console, "_width", 200)
    runner = CliRunner()

    def run(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(connectors_app, list(args), input=input)

    return run


def write(tmp_path: Path, name: str, value: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return str(path)


def quickstart(tmp_path: Path) -> str:
    """Kafka Connect's quickstart payload for the file source, as users have it."""
    config = {"connector.class": SOURCE, "tasks.max": "1", "file": "test.txt", "topic": "t"}
    return write(tmp_path, "source.json", {"name": "local-file-source", "config": config})


def test_create_list_status_delete(sluice, herder: FakeHerder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = sluice("create", quickstart(tmp_path))
    assert result.exit_code == 0, result.output
    assert "created connector local-file-source (source, 1 task(s))" in result.output
    listed = sluice("list")
    assert "local-file-source" in listed.output and "RUNNING" in listed.output
    assert "FileStreamSourceConnector" in listed.output
    status = sluice("status", "local-file-source")
    assert "RUNNING" in status.output and "127.0.0.1:8083" in status.output
    assert sluice("delete", "local-file-source").exit_code == 0
    assert herder.connectors() == []
    assert "no connectors" in sluice("list").output


def test_validate_lists_each_rejected_key(sluice, herder: FakeHerder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    good = sluice("validate", quickstart(tmp_path))
    assert good.exit_code == 0, good.output
    assert "valid org.apache.kafka.connect.file.FileStreamSourceConnector config" in good.output
    body = {"connector.class": "FileStreamSink", "tasks.max": "1"}
    bad = sluice("validate", write(tmp_path, "bad.json", body), "--name", "sink")
    assert bad.exit_code == 1
    lines = bad.output.splitlines()
    assert lines[0].endswith("bad.json: 2 key(s) rejected")
    assert [line.split(":")[0] for line in lines[1:3]] == ["  topics", "  file"]
    assert herder.connectors() == []  # validating creates nothing
    missing = sluice("validate", write(tmp_path, "noclass.json", {"name": "x", "topics": "t"}))
    assert missing.exit_code == 1 and "no connector.class" in missing.output


def test_plugins_lists_classes(sluice) -> None:  # type: ignore[no-untyped-def]
    listed = sluice("plugins")
    assert listed.exit_code == 0
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0] == ["CLASS", "TYPE", "VERSION"]
    assert [SINK, "sink", "0.1.0"] in rows and [SOURCE, "source", "0.1.0"] in rows
    assert "Filter" not in listed.stdout
    assert "org.apache.kafka.connect.transforms.Filter" in sluice("plugins", "--all").stdout


def test_create_flat_config_from_stdin_with_name(sluice, herder: FakeHerder) -> None:  # type: ignore[no-untyped-def]
    flat = json.dumps({"connector.class": SINK, "file": "out.txt", "topics": "t"})
    result = sluice("create", "-", "--name", "sink", input=flat)
    assert result.exit_code == 0, result.output
    assert herder.connector_info("sink")["type"] == "sink"


def test_create_invalid_lists_each_field(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "bad.json", {"name": "bad", "config": {"connector.class": SOURCE}})
    result = sluice("create", path)
    assert result.exit_code == 1
    assert "topic: Missing required configuration" in result.output
    assert "file: Missing required configuration" in result.output
    assert "Traceback" not in result.output


def test_create_errors_before_any_request(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert "cannot read" in sluice("create", str(tmp_path / "missing.json")).output
    (tmp_path / "broken.json").write_text("{")
    assert "not valid JSON" in sluice("create", str(tmp_path / "broken.json")).output
    nameless = write(tmp_path, "nameless.json", {"connector.class": SOURCE})
    assert "--name" in sluice("create", nameless).output


def test_create_existing_hints_at_config(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = quickstart(tmp_path)
    sluice("create", path)
    result = sluice("create", path)
    assert result.exit_code == 1 and "already exists" in result.output
    assert "sluice connectors config local-file-source --set" in result.output


def test_config_print_set_unset(sluice, herder: FakeHerder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sluice("create", quickstart(tmp_path))
    printed = json.loads(sluice("config", "local-file-source").stdout)
    assert printed["topic"] == "t" and printed["name"] == "local-file-source"
    result = sluice("config", "local-file-source", "--set", "topic=u", "--set", "x=1=2")
    assert result.exit_code == 0, result.output
    assert herder.connector_config("local-file-source")["x"] == "1=2"
    sluice("config", "local-file-source", "--unset", "x")
    assert "x" not in herder.connector_config("local-file-source")
    assert sluice("config", "local-file-source", "--set", "novalue").exit_code == 1


def test_pause_resume_stop_restart(sluice, herder: FakeHerder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sluice("create", quickstart(tmp_path))
    name = "local-file-source"
    for verb, state in (("pause", "PAUSED"), ("resume", "RUNNING"), ("stop", "STOPPED")):
        assert sluice(verb, name).exit_code == 0
        assert herder.connector_status(name)["connector"]["state"] == state
    sluice("resume", name)
    herder.fail_task(name, 0, "Traceback...\nValueError: bad line")
    assert "ValueError: bad line" in sluice("status", name).output
    result = sluice("restart", name, "--include-tasks", "--only-failed")
    assert result.exit_code == 0 and "RESTARTING" in result.output
    assert herder.calls[-1] == ("restart_connector", name, True, True)
    assert sluice("restart", name, "--task", "0").exit_code == 0
    assert herder.calls[-1] == ("restart_task", name, 0)


def test_offsets_flow(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sluice("create", quickstart(tmp_path))
    name = "local-file-source"
    entry = {"partition": {"filename": "test.txt"}, "offset": {"position": 7}}
    offsets_file = write(tmp_path, "offsets.json", {"offsets": [entry]})
    refused = sluice("offsets", name, "--set", offsets_file)
    assert refused.exit_code == 1
    assert f"sluice connectors stop {name}" in refused.output
    sluice("stop", name)
    assert "altered" in sluice("offsets", name, "--set", offsets_file).output
    assert json.loads(sluice("offsets", name).stdout) == {"offsets": [entry]}
    assert "reset" in sluice("offsets", name, "--reset").output
    assert json.loads(sluice("offsets", name).stdout) == {"offsets": []}


def test_unknown_connector_hints_at_list(sluice) -> None:  # type: ignore[no-untyped-def]
    result = sluice("status", "ghost")
    assert result.exit_code == 1
    assert "Connector ghost not found" in result.output
    assert "sluice connectors list" in result.output


def test_unreachable_api(sluice) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    result = sluice("list", "--url", url)
    assert result.exit_code == 1
    assert "cannot reach the REST API" in result.output and "sluice up" in result.output


def test_authentication(monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app(FakeHerder(), {"rest.auth.token": TOKEN, "rest.auth.basic": "u:p"})
    runner = CliRunner()
    with RestServer(app, port=0) as served:
        monkeypatch.setenv("SLUICE_REST_URL", served.url)
        denied = runner.invoke(connectors_app, ["list"])
        assert denied.exit_code == 1 and "--token" in denied.output
        assert runner.invoke(connectors_app, ["list", "--token", TOKEN]).exit_code == 0
        assert runner.invoke(connectors_app, ["list", "--user", "u:p"]).exit_code == 0
        monkeypatch.setenv("SLUICE_REST_TOKEN", TOKEN)
        assert runner.invoke(connectors_app, ["list"]).exit_code == 0


def test_generated_token_read_from_the_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``./data/hub.token`` (sluice up's default), $SLUICE_DATA_DIR, $SLUICE_REST_TOKEN_FILE."""
    app = create_app(FakeHerder(), {"rest.auth.token": TOKEN})
    runner = CliRunner()
    with RestServer(app, port=0) as served:
        monkeypatch.setenv("SLUICE_REST_URL", served.url)
        (tmp_path / "data").mkdir()
        (tmp_path / "data" / "hub.token").write_text(TOKEN + "\n")
        (tmp_path / "data" / "hub.token").chmod(0o600)
        assert runner.invoke(connectors_app, ["list"]).exit_code == 0  # cwd is tmp_path
        (tmp_path / "elsewhere").mkdir()
        monkeypatch.chdir(tmp_path / "elsewhere")
        assert runner.invoke(connectors_app, ["list"]).exit_code == 1
        monkeypatch.setenv("SLUICE_DATA_DIR", str(tmp_path / "data"))
        assert runner.invoke(connectors_app, ["list"]).exit_code == 0
        monkeypatch.delenv("SLUICE_DATA_DIR")
        monkeypatch.setenv("SLUICE_REST_TOKEN_FILE", str(tmp_path / "data" / "hub.token"))
        assert runner.invoke(connectors_app, ["list"]).exit_code == 0


def test_registered_in_sluice_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sluice", "connectors", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "offsets" in result.stdout and "restart" in result.stdout


@pytest.fixture
def live_hub(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A real ``sluice up`` (tests/fixtures/hub.py), or a skip while that fixture is absent."""
    try:
        return request.getfixturevalue("hub")
    except pytest.FixtureLookupError:
        pytest.skip("the hub fixture (tests/fixtures/hub.py) is not loaded")


def test_against_sluice_up(live_hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The commands end to end: a real hub, its file source, offsets while STOPPED.

    No token is passed: the CLI reads the one the hub generated in its data directory."""
    monkeypatch.setenv("SLUICE_REST_URL", live_hub.rest_url)
    monkeypatch.setenv("SLUICE_DATA_DIR", str(live_hub.data_dir))
    monkeypatch.setattr(terminal.out, "_width", 200)
    runner = CliRunner()

    def sluice(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(connectors_app, list(args))

    source = tmp_path / "in.txt"
    source.write_text("one\ntwo\nthree\n")
    config = {"connector.class": SOURCE, "tasks.max": "1", "file": str(source), "topic": "e2e"}
    path = write(tmp_path, "source.json", {"name": "local-file-source", "config": config})
    created = sluice("create", path)
    assert created.exit_code == 0, created.output
    wait_until(lambda: "RUNNING" in sluice("status", "local-file-source").stdout, 30, "RUNNING")
    assert "local-file-source" in sluice("list").stdout
    bad_body = {"name": "b", "config": {"connector.class": SOURCE}}
    bad = sluice("create", write(tmp_path, "bad.json", bad_body))
    assert bad.exit_code == 1 and "topic:" in bad.output
    checked = sluice("validate", write(tmp_path, "bad.json", bad_body))
    assert checked.exit_code == 1 and "  topic: " in checked.output, checked.output
    valid = sluice("validate", path)
    assert valid.exit_code == 0, valid.output
    plugins = sluice("plugins").stdout
    assert SOURCE in plugins or "file-source" in plugins  # the class name, or (older) the alias

    assert sluice("stop", "local-file-source").exit_code == 0
    offsets = wait_until(
        lambda: json.loads(sluice("offsets", "local-file-source").stdout)["offsets"], 30, "offsets"
    )
    assert offsets[0]["partition"] == {"filename": str(source)}
    reset = sluice("offsets", "local-file-source", "--reset")
    assert reset.exit_code == 0, reset.output
    assert sluice("delete", "local-file-source").exit_code == 0
    assert "no connectors" in sluice("list").stdout
