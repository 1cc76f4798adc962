"""Package dependencies point one way, checked on the source (AST), not by importing, so an
import hidden in a function body or under TYPE_CHECKING is caught too.

The contract stays a contract: ``hub.api`` depends on nothing else of Sluice, and connector
packages depend only on ``hub.api`` (plus their own package), so the runtime, the REST API and
the broker can change without breaking a plugin. Above it the layers are::

    kafka_admin, broker, hub.api                         (each depends on nothing of Sluice)
    spark_pipelines                                      (on hub.api: path and client policies)
    hub.plugins <- hub.converters <- hub.transforms      (on hub.api and the ones before)
    hub.runtime, hub.pipelines                   (on the above and kafka_admin)
    hub.rest                                             (on the runtime)
    ui (the console's backend), broker.cli, hub.connectors_cli
    sluice (the application: CLI and composition root)   (on anything)

``schema_registry`` is two layers: its core (client, formats, state: what converters use)
depends on nothing, its REST resources and server sit above ``hub.rest``/``hub.runtime``.

``sluice`` itself (the version), ``sluice.logs`` (the log format), ``sluice.throttled_log``,
``sluice.terminal`` (what every command prints with) and ``sluice.client_security`` (Kafka
client security settings in librdkafka's and kafka-python's forms) are leaves any layer may
use. ``RULES`` is the one table of what may import what.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIRST_PARTY = (
    "hub", "broker", "connectors", "sluice", "spark_pipelines", "ui", "kafka_admin",
    "schema_registry",
)  # fmt: skip
LEAVES = (  # modules every layer may import
    "sluice", "sluice.logs", "sluice.throttled_log", "sluice.terminal", "sluice.client_security",
)  # fmt: skip

_RUNTIME_BELOW = (
    "hub.api", "hub.plugins", "hub.converters", "hub.transforms", "kafka_admin", "schema_registry",
)  # fmt: skip
RULES: dict[str, tuple[str, ...]] = {
    # layer (a module belongs to the longest matching name) -> the other layers it may import
    "kafka_admin": (),
    "broker": (),
    "broker.cli": ("broker", "kafka_admin"),
    # templates declare local paths and Kafka client options with the contract's policies
    # (hub.api.paths, hub.api.client_settings: docs/security.md)
    "spark_pipelines": ("hub.api",),
    # the CLI edge finds the hub's generated REST token (hub.rest.token_file) for --hub
    "spark_pipelines.cli": ("spark_pipelines", "hub.api", "hub.rest"),
    "connectors": ("hub.api",),
    "hub": (),
    "hub.api": (),
    "hub.plugins": ("hub.api",),
    "hub.converters": ("hub.api", "hub.plugins", "schema_registry"),
    "hub.transforms": ("hub.api", "hub.plugins", "hub.converters"),
    "hub.runtime": _RUNTIME_BELOW,
    "hub.pipelines": (),
    "hub.rest": (*_RUNTIME_BELOW, "hub.runtime", "hub.pipelines"),
    "hub.connectors_cli": ("hub.rest",),
    "ui": ("hub.rest", "kafka_admin", "schema_registry", "hub.converters"),
    # the registry's core (client, formats, state) is a library; its server is an application
    "schema_registry": (),
    "schema_registry.rest": ("schema_registry", "hub.rest"),
    "schema_registry.server": ("schema_registry", "schema_registry.rest", "hub.runtime"),
    "schema_registry.embed": ("schema_registry", "schema_registry.server"),
    "schema_registry.cli": (
        "schema_registry",
        "schema_registry.server",
        "hub.runtime",
        "hub.rest",  # token_file
    ),
    "sluice": ("*",),
}


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
    return module.split(".")[0] in FIRST_PARTY and module not in LEAVES


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


def _package(module: str) -> str:
    """The ``RULES`` entry governing ``module``: its longest matching prefix."""
    matches = [name for name in RULES if _within(module, name)]
    assert matches, f"{module} belongs to no layer of RULES: add it there"
    return max(matches, key=len)


def _python_files() -> list[Path]:
    return sorted(p for top in FIRST_PARTY for p in (ROOT / top).rglob("*.py"))


def test_every_package_imports_only_the_layers_below_it() -> None:
    bad = []
    files = _python_files()
    assert len(files) > 200  # the walk found the tree
    for path in files:
        own = _package(_module_name(path))
        allowed = {own, *RULES[own]}
        bad += [
            f"{path.relative_to(ROOT)}:{line} ({own}) imports {module} ({_package(module)})"
            for line, module in imports(path)
            if _first_party(module) and "*" not in allowed and _package(module) not in allowed
        ]
    assert bad == [], "\n".join(bad)


def test_hub_rest_imports_neither_the_console_nor_spark() -> None:
    """The application wires ``ui`` and ``spark_pipelines`` into the REST app (issue 18)."""
    assert not any(_within(m, p) for p in ("ui", "spark_pipelines") for m in RULES["hub.rest"])


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
