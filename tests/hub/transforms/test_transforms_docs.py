"""docs/transforms.md names every built-in transform, predicate and converter."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub.plugins.registry import PluginRegistry

DOCS = Path(__file__).resolve().parents[3] / "docs" / "transforms.md"


@pytest.mark.parametrize("kind", ["transform", "predicate", "converter", "header_converter"])
def test_every_builtin_is_documented(registry: PluginRegistry, kind: str) -> None:
    text = DOCS.read_text()
    builtin = [c for c in registry.classes(kind) if c.__module__.startswith("hub.")]
    assert builtin
    missing = [c.name for c in builtin if f"`{c.name}`" not in text]
    assert not missing, f"docs/transforms.md does not mention {kind}s {missing}"
