"""Without the ``duckdb`` extra, a DuckDB ``connection.url`` is a validation error naming it.

The modules are hidden by ``None`` entries in ``sys.modules`` of a child process (Python's
"known missing" marker), since SQLAlchemy caches loaded dialects in-process.
"""

from __future__ import annotations

import subprocess
import sys


def _hide(*modules: str) -> str:
    return "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)


def test_warehouse_sink_with_a_duckdb_url_names_the_duckdb_extra() -> None:
    code = _hide("duckdb", "duckdb_engine") + (
        "from hub.api import ConfigError\n"
        "from connectors.warehouse.config import WarehouseSinkConfig\n"
        "try:\n"
        "    WarehouseSinkConfig.model_validate(\n"
        "        {'connection.url': 'jdbc:duckdb:/tmp/x.duckdb', 'topics': 't'})\n"
        "except Exception as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "connection.url" in done.stdout
    assert "pip install 'sluice[duckdb]'" in done.stdout
