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


def unavailable() -> str | None:
    """Why templates cannot run here (the ``spark`` extra is missing), or None; imports nothing."""
    from spark_pipelines.errors import MissingExtraError
    from spark_pipelines.extra import require_spark

    try:
        require_spark("running a pipeline")
    except MissingExtraError as exc:
        return str(exc)
    return None
