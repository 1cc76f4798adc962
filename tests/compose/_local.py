"""Running compose services as local processes: what the local compose tests share.

A container sees service host names, its own ports and container paths; here each becomes
127.0.0.1, a free port or a temp directory (``Mapping``), applied to the command line and to
the text of every file the service mounts (``localize`` copies them). Health is judged by
compose/healthcheck.py, the probe the containers run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.compose._compose import COMPOSE_DIR, Service
from tests.fixtures._process import ServiceProcess


def _load_healthcheck() -> Any:
    spec = importlib.util.spec_from_file_location(
        "sluice_healthcheck", COMPOSE_DIR / "healthcheck.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


health = _load_healthcheck()


class LocalService(ServiceProcess):
    """``sluice ARGS`` of one compose service, ready when its health probe passes."""

    stop_timeout = 60.0
    rest_port = 0  # a hub's REST port
    metrics_port = 0  # a broker's metrics.port

    def __init__(self, name: str, args: list[str], log_path: Path, probe: list[str]) -> None:
        super().__init__(log_path)
        self.name = name
        self.args = args
        self.probe = probe  # the argv of sluice-healthcheck in the container
        self.environment: dict[str, str] = {}  # the compose service's (for the test to read)

    def start(self) -> None:
        self._spawn([sys.executable, "-m", "sluice", *self.args])

    def healthy(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"{self.name} exited:\n{self.log()[-4000:]}")
        return bool(health.check(*self.probe)[0])


class Mapping:
    """Docker's view -> this machine's: ordered text replacements (longest first)."""

    def __init__(self, replacements: dict[str, str]) -> None:
        self.replacements = sorted(replacements.items(), key=lambda kv: -len(kv[0]))

    def __call__(self, text: str) -> str:
        pattern = re.compile("|".join(re.escape(old) for old, _ in self.replacements))
        table = dict(self.replacements)
        return pattern.sub(lambda m: table[m.group(0)], text)


def localize(service: Service, mapping: Mapping, root: Path) -> list[str]:
    """The service's sluice arguments with its bind-mounted files copied (rewritten) under
    ``root`` and every path and address mapped."""
    args = service.sluice_args
    assert args is not None
    local: list[str] = []
    for arg in args:
        source = service.host_path(arg)
        if source is not None and source.is_file():
            copy = root / "etc" / service.name / source.name
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(mapping(source.read_text()))
            local.append(str(copy))
        else:
            local.append(mapping(arg))
    return local


def connector_files(init: Service) -> dict[str, Path]:
    """The connector JSON files the init service mounts, by connector name."""
    directory = init.host_path(init.environment()["CONNECTORS_DIR"])
    assert directory is not None
    return {path.stem: path for path in sorted(directory.glob("*.json"))}


def init_connectors(
    init: Service, bodies: dict[str, Any], mapping: Mapping, root: Path, rest_port: int
) -> str:
    """compose/init-connectors.sh, as the init service runs it, over ``bodies`` (connector
    name -> its localized JSON body)."""
    directory = root / "connectors"
    directory.mkdir(exist_ok=True)
    for name, body in bodies.items():
        (directory / f"{name}.json").write_text(json.dumps(body))
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "SLUICE_REST_URL": f"http://127.0.0.1:{rest_port}",
        "SLUICE_REST_TOKEN_FILE": mapping(init.environment()["SLUICE_REST_TOKEN_FILE"]),
        "CONNECTORS_DIR": str(directory),
    }
    done = subprocess.run(
        ["sh", str(COMPOSE_DIR / "init-connectors.sh")], env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def produce(log_file: Path, lines: int) -> list[str]:
    """compose/log-producer.sh writing ``lines`` lines at once (the file's stem as service)."""
    env = {"LOG_FILE": str(log_file), "SERVICE": log_file.stem, "LINES": str(lines),
           "INTERVAL": "0", "PATH": "/usr/bin:/bin"}  # fmt: skip
    subprocess.run(
        ["sh", str(COMPOSE_DIR / "log-producer.sh")],
        env=env,
        check=True,
    )
    return log_file.read_text().splitlines()
