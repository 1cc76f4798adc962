"""docs/plugins.md documents every hook (datasette's test_docs idea)."""

from __future__ import annotations

import re
from pathlib import Path

from hub.plugins.registry import PluginRegistry

DOCS = Path(__file__).resolve().parents[3] / "docs" / "plugins.md"


def _documented_hooks() -> set[str]:
    return set(re.findall(r"^##+ `?(sluice_\w+)", DOCS.read_text(), flags=re.MULTILINE))


def test_every_hook_has_a_heading(registry: PluginRegistry) -> None:
    hooks = {n for n in dir(registry.pm.hook) if n.startswith("sluice_")}
    missing = hooks - _documented_hooks()
    assert not missing, f"undocumented hooks in docs/plugins.md: {sorted(missing)}"


def test_no_heading_for_a_hook_that_does_not_exist(registry: PluginRegistry) -> None:
    hooks = {n for n in dir(registry.pm.hook) if n.startswith("sluice_")}
    assert _documented_hooks() <= hooks


def test_each_hook_section_shows_its_signature_and_an_example(registry: PluginRegistry) -> None:
    text = DOCS.read_text()
    for hook in (n for n in dir(registry.pm.hook) if n.startswith("sluice_")):
        section = text.split(f"## `{hook}(", 1)[1].split("\n## ", 1)[0]
        assert f"def {hook}(" in section, f"{hook}: no example implementation"
