"""Every import the product makes at run time comes from pyproject's ``dependencies``.

A static walk (AST, imports inside functions included) of every module of the installed
packages, matched to the distribution that provides each imported top-level name in this
environment. A third-party import must be a core dependency, or, inside the modules an extra
serves, that extra's. The reverse holds too: a core dependency nobody imports is either used
indirectly (listed in ``USED_INDIRECTLY`` with the reason) or dead weight.

Why not just install and run: the fresh-venv test (tests/test_install.py) runs what a user runs,
but only the code paths it reaches; this walk sees the rest (a connector's lazy import, say).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "sluice", "broker", "hub", "connectors", "spark_pipelines", "ui", "kafka_admin",
    "schema_registry",
)  # fmt: skip

# Modules (prefixes) whose imports an extra provides; the command that reaches them names the
# extra when it is missing (docs/install.md).
EXTRA_MODULES = {
    "spark_pipelines.datasource": "spark",
    "spark_pipelines.templates": "spark",
    "spark_pipelines.runner": "spark",
    "spark_pipelines.cli": "spark",
    "spark_pipelines.sql_guard": "spark",
}

# Core dependencies no module imports by name, and why they are there.
USED_INDIRECTLY = {
    "python-snappy": "kafka-python's record codec imports it to (de)compress snappy batches",
    "lz4": "kafka-python's record codec imports it for lz4 batches",
    "zstandard": "kafka-python's record codec imports it for zstd batches",
    "xxhash": "kafka-python's lz4 framing of message format v0/v1",
}


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(spec: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    assert match, spec
    return _normalize(match.group(1))


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _imports() -> dict[str, set[str]]:
    """Top-level third-party name -> the modules (dotted) that import it."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in sys.stdlib_module_names or top in PACKAGES or top == "__future__":
                        continue
                    found.setdefault(top, set()).add(module)
    return found


def _extra_of(module: str) -> str | None:
    matches = [
        prefix for prefix in EXTRA_MODULES if module == prefix or module.startswith(f"{prefix}.")
    ]
    return EXTRA_MODULES[max(matches, key=len)] if matches else None


def _extras() -> dict[str, set[str]]:
    """Extra -> distributions it installs (``all`` and self-references resolved)."""
    raw = _project()["optional-dependencies"]
    resolved: dict[str, set[str]] = {}

    def names(extra: str) -> set[str]:
        out: set[str] = set()
        for spec in raw[extra]:
            name = _requirement_name(spec)
            if name == "sluice":
                inner = re.search(r"\[(.*)\]", spec)
                assert inner, spec
                for sub in inner.group(1).split(","):
                    out |= names(sub.strip())
            else:
                out.add(name)
        return out

    for extra in raw:
        resolved[extra] = names(extra)
    return resolved


def test_every_runtime_import_is_a_declared_dependency() -> None:
    core = {_requirement_name(spec) for spec in _project()["dependencies"]}
    extras = _extras()
    providers = metadata.packages_distributions()
    imports = _imports()
    assert {"confluent_kafka", "pydantic", "httpx"} <= set(imports)  # the walk found the tree
    missing = []
    for top, modules in sorted(imports.items()):
        dists = {_normalize(d) for d in providers.get(top, [])}
        assert dists, f"{top} (imported by {sorted(modules)[:3]}) is not installed here"
        for module in sorted(modules):
            extra = _extra_of(module)
            allowed = core | (extras[extra] if extra else set())
            if not dists & allowed:
                where = f"extra [{extra}]" if extra else "dependencies"
                missing.append(
                    f"{module} imports {top} ({', '.join(sorted(dists))}): not in {where}"
                )
    assert missing == [], "\n".join(missing)


def test_every_core_dependency_is_used() -> None:
    providers = metadata.packages_distributions()
    imported = {
        _normalize(dist)
        for top, modules in _imports().items()
        if any(_extra_of(m) is None for m in modules)
        for dist in providers.get(top, [])
    }
    unused = (
        {_requirement_name(spec) for spec in _project()["dependencies"]}
        - imported
        - set(USED_INDIRECTLY)
    )
    assert unused == set(), f"core dependencies nothing imports: {sorted(unused)}"


def test_heavy_parts_are_extras_not_core() -> None:
    core = {_requirement_name(spec) for spec in _project()["dependencies"]}
    extras = _extras()
    assert not {"pyspark", "numba", "llvmlite", "duckdb", "duckdb-engine"} & core
    assert {"pyspark", "numba"} <= extras["spark"]
    assert {"duckdb", "duckdb-engine"} <= extras["duckdb"]
    assert extras["spark"] | extras["duckdb"] <= extras["all"]
