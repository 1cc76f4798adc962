"""Sluice installed as users install it: the wheel, in a fresh virtualenv, with no extras.

Built from a copy of the tracked sources (so the build leaves nothing in the checkout) and
installed by pip into a new virtualenv with only its ``dependencies`` (offline from pip's
cache and the configured index; ~40 s on the 2-core VM). Then, from an empty directory, what a
first-hour user runs: ``sluice --help`` and every command's help, ``sluice up`` on free ports,
a FileStreamSource created with ``sluice connectors create`` (the REST token found by the CLI
in ``./data``), its records read back with ``sluice consume``, Ctrl-C (exit 0, no ERROR line);
and the commands that need a missing extra saying which ``pip install`` adds it.

``[all]`` in a second fresh virtualenv takes another ~80 s (pyspark alone unpacks ~500 MB), too
slow for the default suite; the lighter check installs the same wheel with ``--no-deps`` into
a virtualenv that sees this environment's packages (every extra installed) and checks that
the wheel's extras resolve to them and that the Spark and DuckDB parts import from it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.broker import wait_until
from tests.fixtures.hub import free_port

REPO = Path(__file__).resolve().parents[1]
PACKAGES = (
    "sluice", "broker", "hub", "connectors", "spark_pipelines", "ui", "kafka_admin",
    "schema_registry",
)  # fmt: skip
HEAVY = ("pyspark", "numba", "llvmlite", "duckdb", "duckdb_engine", "pandas")
INSTALL_TIMEOUT_S = 600  # a guard against a hung pip, not a speed target


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 120) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from a copy of the tracked files."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "pyproject.toml", "README.md", *PACKAGES],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, tracked):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, src / name)
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(root / "dist"), str(src)],
        root, dict(os.environ),
    )  # fmt: skip
    (built,) = (root / "dist").glob("sluice-*.whl")
    return built


def _clean_env(venv: Path) -> dict[str, str]:
    """The environment a user's shell would have: the venv first on PATH, no test settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLUICE_", "PYTHON"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "200"
    return env


@pytest.fixture(scope="module")
def core_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtualenv with ``pip install sluice-*.whl`` (no extras)."""
    venv = tmp_path_factory.mktemp("core") / "venv"
    began = time.monotonic()
    _run([sys.executable, "-m", "venv", str(venv)], venv.parent, dict(os.environ))
    _run(
        # --no-compile: byte-compiling botocore's and pyarrow's thousands of files doubles the
        # time; Python compiles what a user imports on first use anyway.
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile",
         "--disable-pip-version-check", str(wheel)],
        venv.parent, dict(os.environ), timeout=INSTALL_TIMEOUT_S,
    )  # fmt: skip
    print(f"\nfresh venv, no extras: {time.monotonic() - began:.1f} s")  # shown with -s
    yield venv


def test_no_extra_brings_the_heavy_parts(core_venv: Path) -> None:
    code = f"import importlib.util as u; print([m for m in {HEAVY!r} if u.find_spec(m)])"
    found = _run([str(core_venv / "bin" / "python"), "-c", code], core_venv, _clean_env(core_venv))
    assert found.strip() == "[]"


def test_every_help_runs(core_venv: Path, tmp_path: Path) -> None:
    env = _clean_env(core_venv)
    top = _run(["sluice", "--help"], tmp_path, env)
    commands = [
        "produce", "consume", "up", "connect", "broker", "schema-registry", "topics", "groups",
        "connectors", "pipelines", "schemas",
    ]  # fmt: skip
    assert all(command in top for command in commands)
    for command in ("up", "connectors"):  # the console script, as typed
        assert f"Usage: sluice {command}" in _run(["sluice", command, "--help"], tmp_path, env)
    # every command's and sub-command's help, in one process of the installed package (a
    # process per command would add ~1 s each for nothing the walk does not see)
    walk = (
        "from sluice.cli import build\n"
        "root = build()\n"
        "def walk(c, path):\n"
        "    for name, sub in getattr(c, 'commands', {}).items():\n"
        "        yield (*path, name)\n"
        "        yield from walk(sub, (*path, name))\n"
        "n = 0\n"
        "for path in walk(root, ()):\n"
        "    root.main([*path, '--help'], prog_name='sluice', standalone_mode=False)\n"
        "    n += 1\n"
        "print('helped', n)\n"
    )
    out = _run([str(core_venv / "bin" / "python"), "-c", walk], tmp_path, env)
    assert int(out.strip().splitlines()[-1].split()[1]) >= 40


def test_missing_extras_are_named(core_venv: Path, tmp_path: Path) -> None:
    env = _clean_env(core_venv)
    config = tmp_path / "logs.json"
    config.write_text(
        json.dumps(
            {
                "input": {"bootstrap_servers": "127.0.0.1:9", "topics": ["raw"]},
                "checkpoint_dir": str(tmp_path / "ck"),
                "output_topic": "counts",
            }
        )
    )
    assert "log_aggregation" in _run(["sluice", "pipelines", "list"], tmp_path, env)
    run = subprocess.run(
        ["sluice", "pipelines", "run", "log_aggregation", "--config", str(config), "--once"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1
    assert "pip install 'sluice[spark]'" in run.stderr and "Traceback" not in run.stderr
    python = str(core_venv / "bin" / "python")
    source = subprocess.run(
        [python, "-c", "import spark_pipelines.datasource.source"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert source.returncode == 1 and "pip install 'sluice[spark]'" in source.stderr
    warehouse = (
        "from connectors.warehouse.config import WarehouseSinkConfig\n"
        "try:\n"
        "    WarehouseSinkConfig.model_validate({'connection.url': 'jdbc:duckdb:x.db', "
        "'topics': 't'})\n"
        "except Exception as exc:\n"
        "    print(exc)\n"
    )
    assert "pip install 'sluice[duckdb]'" in _run([python, "-c", warehouse], tmp_path, env)


def test_up_create_consume_stop(core_venv: Path, tmp_path: Path) -> None:
    """The README's first steps, from an empty directory, as a user types them."""
    env = _clean_env(core_venv)
    rest_port = free_port()
    (tmp_path / "data").mkdir()
    lines = [f"hello {i}" for i in range(20)]
    (tmp_path / "data" / "app.log").write_text("".join(f"{line}\n" for line in lines))
    log_path = tmp_path / "up.log"
    with open(log_path, "wb") as log:
        up = subprocess.Popen(
            ["sluice", "up", "--data-dir", "data", "--broker-port", "0",
             "--rest-port", str(rest_port), "--schema-registry-port", "0"],
            cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:

        def listening() -> bool:
            assert up.poll() is None, log_path.read_text()
            return "hub listening" in log_path.read_text()

        wait_until(listening, 120, "sluice up to log 'hub listening'")
        text = log_path.read_text()
        bootstrap = text.split("broker listening address=")[1].split()[0]
        env["SLUICE_REST_URL"] = f"http://127.0.0.1:{rest_port}"
        connector = {
            "name": "local-file-source",
            "config": {
                "connector.class": "FileStreamSource",
                "tasks.max": "1",
                "file": "data/app.log",
                "topic": "connect-test",
            },
        }
        (tmp_path / "source.json").write_text(json.dumps(connector))
        # the API wants the token `sluice up` generated; the CLI finds it in ./data itself
        assert (tmp_path / "data" / "hub.token").exists()
        with pytest.raises(urllib.error.HTTPError) as anonymous:
            urllib.request.urlopen(f"{env['SLUICE_REST_URL']}/connectors", timeout=10)
        assert anonymous.value.code == 401
        created = _run(["sluice", "connectors", "create", "source.json"], tmp_path, env)
        assert "created connector local-file-source" in created

        def consumed() -> list[str] | None:
            done = subprocess.run(
                ["sluice", "consume", "connect-test", "-n", str(len(lines)), "-b", bootstrap],
                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            got = done.stdout.splitlines()
            return got if done.returncode == 0 and len(got) == len(lines) else None

        # JsonConverter with schemas (Kafka Connect's default): {"schema":..., "payload": line}
        records = wait_until(consumed, 60, "the file's lines in connect-test")
        assert [json.loads(record)["payload"] for record in records] == lines
        status = _run(["sluice", "connectors", "status", "local-file-source"], tmp_path, env)
        assert "RUNNING" in status
    finally:
        if up.poll() is None:
            up.send_signal(signal.SIGINT)
        code = up.wait(60)
    text = log_path.read_text()
    assert code == 0, text[-4000:]
    assert "broker stopped" in text
    errors = [line for line in text.splitlines() if " error " in line or "Traceback" in line]
    assert errors == [], "\n".join(errors)


@pytest.fixture(scope="module")
def all_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel with ``--no-deps`` in a venv that sees this environment's packages."""
    venv = tmp_path_factory.mktemp("all") / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], venv.parent, dict(os.environ))
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / version / "site-packages"
    # Last on sys.path: the wheel installed into the venv wins over this checkout's editable
    # install (whose own .pth hooks are not run for a path added this way).
    (site / "zz-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "-q", "--no-deps", str(wheel)],
        venv.parent, dict(os.environ),
    )  # fmt: skip
    return venv


def test_all_extras_resolve_and_import(all_venv: Path, tmp_path: Path) -> None:
    check = (
        "import importlib.metadata as md, sluice, spark_pipelines\n"
        "from packaging.requirements import Requirement\n"
        "assert '/site-packages/' in sluice.__file__, sluice.__file__\n"
        "missing = []\n"
        "for spec in md.requires('sluice'):\n"
        "    req = Requirement(spec)\n"
        "    wanted = req.marker is None or any(\n"
        "        req.marker.evaluate({'extra': e}) for e in ('all', 'spark', 'duckdb'))\n"
        "    if wanted and not (req.marker and 'test' in str(req.marker)):\n"
        "        try:\n"
        "            if not req.specifier.contains(md.version(req.name), prereleases=True):\n"
        "                missing.append(spec)\n"
        "        except md.PackageNotFoundError:\n"
        "            missing.append(spec)\n"
        "assert missing == [], missing\n"
        "import spark_pipelines.datasource.source, spark_pipelines.datasource._decode\n"
        "from connectors.warehouse.config import WarehouseSinkConfig\n"
        "WarehouseSinkConfig.model_validate(\n"
        "    {'connection.url': 'jdbc:duckdb:x.db', 'topics': 't'})\n"
        "from spark_pipelines.templates import unavailable\n"
        "assert unavailable() is None\n"
        "print('ok')\n"
    )
    env = _clean_env(all_venv)
    assert _run([str(all_venv / "bin" / "python"), "-c", check], tmp_path, env).strip() == "ok"
    assert "log_aggregation" in _run(["sluice", "pipelines", "list"], tmp_path, env)
