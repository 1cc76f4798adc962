"""Pipeline templates: each module has ``NAME``, ``DESCRIPTION``, ``Config`` and ``start``."""

from __future__ import annotations

import importlib
from types import ModuleType

NAMES = ("log_aggregation", "metrics_rollup", "cdc_to_table", "clean_dedupe_enrich", "sql")


def load(name: str) -> ModuleType:
    """The template module called ``name``; KeyError listing the known names otherwise."""
    if name not in NAMES:
        raise KeyError(f"unknown template {name!r}; known: {', '.join(NAMES)}")
    return importlib.import_module(f"spark_pipelines.templates.{name}")
