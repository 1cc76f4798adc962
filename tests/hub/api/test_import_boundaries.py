"""The contract stays a contract: ``hub.api`` depends on nothing else of Sluice, and connector
packages depend only on ``hub.api`` (plus their own package), so the runtime, the REST API and
the broker can change without breaking a plugin. Checked on the source (AST), not by importing,
so an import hidden in a function body or under TYPE_CHECKING is caught too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIRST_PARTY = ("hub", "broker", "connectors", "sluice", "spark_pipelines")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, module_name: str | None = None) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, relative ones resolved.

    ``module_name`` overrides the dotted name derived from the path (for files outside ROOT).
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    package = (module_name or _module_name(path)).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            yield node.lineno, module


def _first_party(module: str) -> bool:
    return module.split(".")[0] in FIRST_PARTY


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations(
    files: list[Path], allowed: tuple[str, ...], module_name: str | None = None
) -> list[str]:
    bad = []
    for path in files:
        for line, module in imports(path, module_name):
            if _first_party(module) and not any(_within(module, a) for a in allowed):
                bad.append(f"{path.name}:{line} imports {module}")
    return bad


def test_hub_api_imports_only_itself() -> None:
    files = sorted((ROOT / "hub" / "api").rglob("*.py"))
    assert files
    assert _violations(files, ("hub.api",)) == []


def test_connectors_import_only_hub_api() -> None:
    files = sorted((ROOT / "connectors").rglob("*.py")) if (ROOT / "connectors").exists() else []
    if not files:
        pytest.skip("no connector packages yet")
    assert _violations(files, ("hub.api", "connectors")) == []


def test_the_checker_catches_forbidden_imports(tmp_path: Path) -> None:
    source = (
        "import broker.log\n"
        "from hub.runtime import errors\n"
        "from ..rest import app\n"
        "from . import record\n"
        "def f():\n    from hub.api.schema import Schema\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import hub.plugins\n"
    )
    fake = tmp_path / "probe.py"
    fake.write_text(source)
    found = sorted(m for _, m in imports(fake, "hub.api.probe"))
    bad = _violations([fake], ("hub.api",), "hub.api.probe")
    assert "hub.rest" in found and "hub.api" in found
    assert [b.split(" imports ")[1] for b in bad] == [
        "broker.log", "hub.runtime", "hub.rest", "hub.plugins",
    ]  # fmt: skip
