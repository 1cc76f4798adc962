"""A broken handler (or storage, or coordinator) module stops the broker from starting.

A broker that logged the import error and kept running would advertise fewer APIs and look
healthy while every client of the missing ones failed. Each case starts ``sluice broker`` in
a subprocess in which one of the broker's own modules cannot be imported (``sys.modules[name]
= None`` makes any import of it raise ImportError, as a syntax error or a missing dependency
inside it would) and expects a non-zero exit naming the module, and no listener.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

_START = """
import runpy, sys
sys.modules[{module!r}] = None
sys.argv = ["sluice", "broker", "--data-dir", {data!r}, "--host", "127.0.0.1", "--port", "0"]
runpy.run_module("sluice", run_name="__main__")
"""


@pytest.mark.parametrize(
    "module",
    [
        "broker.protocol.handlers.fetch",
        "broker.protocol.handlers.groups",
        "broker.log.log_manager",
        "broker.coordinator",
    ],
)
def test_a_broken_broker_module_fails_the_start_loudly(tmp_path: Path, module: str) -> None:
    script = _START.format(module=module, data=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert module in output
    assert "ImportError" in output or "ModuleNotFoundError" in output
    assert "broker listening" not in output
