"""The structure rules of docs/structure.md hold for every module outside tests/ and bench/.

Two rules that otherwise decay one feature at a time (issue 18):

- every exception class lives in its package's ``errors.py``, under the package's root, or has
  a row in the "Exception classes still defined outside an ``errors.py``" table saying why;
- a module over 400 lines has a row in the "Modules over ~400 lines" table saying why, and has
  not grown far past the count written there.

Both tables are parsed from the document, so a new exception or a long module is either moved
or explained where a reader looks, and a row whose class or module is gone fails as stale.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STRUCTURE = ROOT / "docs" / "structure.md"
SKIPPED_DIRS = {"tests", "bench", ".venv", ".git", "node_modules", "build", "dist"}
MAX_LINES = 400
GROWTH = 40  # lines a module may grow past its row before the row must be rewritten

EXCEPTIONS_HEADING = "Exception classes still defined outside an `errors.py`"
LONG_HEADING = "## Modules over ~400 lines"

BUILTIN_EXCEPTIONS = frozenset(
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type)
    and issubclass(getattr(builtins, name), BaseException)
)


def source_modules() -> list[Path]:
    """Every Python module of the project that is not a test or a benchmark."""
    found = []
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if parts[0] in SKIPPED_DIRS or any(p.startswith(".") for p in parts):
            continue
        found.append(path)
    return sorted(found)


def _table_after(heading: str) -> list[list[str]]:
    """The rows (cells, backticks stripped) of the first Markdown table after ``heading``."""
    text = STRUCTURE.read_text()
    start = text.index(heading)
    rows: list[list[str]] = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
            if not set(cells[0]) <= {"-", ":"}:
                rows.append(cells)
        elif rows:
            break
    return rows[1:]  # without the header row


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def exception_classes() -> set[tuple[str, str]]:
    """(class name, module path) of every exception class defined outside an errors.py.

    A class is an exception when a base is a builtin exception, a name ending in Error or
    Exception (library classes such as ``HTTPException``), or a class already found to be one
    (resolved by name, repeatedly, so subclasses of subclasses count).
    """
    classes: list[tuple[str, str, list[str]]] = []
    for path in source_modules():
        tree = ast.parse(path.read_text(), filename=str(path))
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [b for b in map(_base_name, node.bases) if b is not None]
                classes.append((node.name, rel, bases))
    known = set(BUILTIN_EXCEPTIONS)
    changed = True
    while changed:
        changed = False
        for name, _, bases in classes:
            if name not in known and any(
                b in known or b.endswith(("Error", "Exception")) for b in bases
            ):
                known.add(name)
                changed = True
    return {
        (name, rel)
        for name, rel, _ in classes
        if name in known and name not in BUILTIN_EXCEPTIONS and not rel.endswith("errors.py")
    }


def test_the_walk_sees_the_project() -> None:
    # A broken walk (wrong root, every package skipped) would make the rules vacuous.
    modules = {p.relative_to(ROOT).parts[0] for p in source_modules()}
    assert {"broker", "hub", "connectors", "sluice", "schema_registry"} <= modules
    assert ("CloseConnection", "broker/protocol/registry.py") in exception_classes()


def test_exception_classes_live_in_errors_py_or_are_explained() -> None:
    documented = {(row[0], row[1]) for row in _table_after(EXCEPTIONS_HEADING)}
    found = exception_classes()
    unexplained = sorted(found - documented)
    assert not unexplained, (
        "exception classes outside an errors.py: move each under its package's root in "
        f"errors.py, or add a row to docs/structure.md saying why it stays: {unexplained}"
    )
    stale = sorted(documented - found)
    assert not stale, f"docs/structure.md explains classes that are not there: {stale}"


def test_long_modules_are_explained() -> None:
    rows = {row[0]: int(re.sub(r"\D", "", row[1])) for row in _table_after(LONG_HEADING)}
    problems = []
    for path in source_modules():
        rel = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text().splitlines())
        if rel in rows:
            if lines > rows[rel] + GROWTH:
                problems.append(f"{rel}: {lines} lines, its row says ~{rows[rel]}")
            elif lines <= MAX_LINES:
                problems.append(f"{rel}: {lines} lines now, its row can go")
        elif lines > MAX_LINES:
            problems.append(f"{rel}: {lines} lines and no row")
    stale = [m for m in rows if not (ROOT / m).is_file()]
    assert not problems, (
        "modules over 400 lines: split along a real seam or add/update the row in "
        f"docs/structure.md's long-modules table: {problems}"
    )
    assert not stale, f"docs/structure.md lists modules that are gone: {stale}"
