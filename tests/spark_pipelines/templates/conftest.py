"""Helpers for template tests: run a template once (availableNow) through the runner."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def run_once(spark):
    from spark_pipelines import runner
    from spark_pipelines.templates import load

    def _run(name: str, config: dict[str, Any]) -> runner.RunResult:
        module = load(name)
        cfg = module.Config.model_validate(config)
        return runner.run(
            lambda s, configure: module.start(s, cfg, configure), spark, once=True, timeout_s=240
        )

    return _run
