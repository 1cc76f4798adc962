"""``sluice up`` loads no Spark, numba or DuckDB code until something uses it.

A hub node (broker thread, herder with every built-in plugin, pipelines service, REST app
with the console) is started in a child process, which then reports what it imported. The
fresh-venv test (tests/test_install.py) shows the same from the other side: ``sluice up``
runs where these are not installed at all.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.fixtures.hub import free_port

HEAVY = ("pyspark", "numba", "llvmlite", "duckdb", "duckdb_engine", "pandas")

NODE = """
import sys
from pathlib import Path
from broker.config import BrokerConfig
from hub.runtime.config import WorkerConfig
from sluice.cli import build
from sluice.node import BrokerSettings, Node, NodeConfig

build()  # the CLI, every layer's commands registered
data = Path(sys.argv[1])
node = Node(NodeConfig(
    worker=WorkerConfig.from_mapping({"rest.port": int(sys.argv[2])}),
    broker=BrokerSettings(BrokerConfig(data_dir=data, port=0), in_thread=True),
    pipelines_dir=data / "pipelines",
    allow_unauthenticated=True,
))
node.start()
try:
    node.app()
    print(sorted(m for m in %r if m in sys.modules))
finally:
    node.stop()
"""


def test_a_started_hub_imports_no_heavy_extra(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", NODE % (HEAVY,), str(tmp_path / "data"), str(free_port())],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
