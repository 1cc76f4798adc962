"""The whole REST app of a Sluice hub: Kafka Connect's API plus what the application adds.

``hub.rest.create_app`` serves the herder; the application adds the web console's routes
(``ui.console_api``) and hands in the pipelines service it built, so ``hub.rest`` depends on
neither ``ui`` nor ``spark_pipelines``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from hub.rest.app import create_app


def build_app(
    herder: Any,
    worker_config: Any,
    *,
    pipelines: Any = None,
    allow_unauthenticated: bool | None = None,
) -> FastAPI:
    """The hub's REST app with the console (``/ui``, ``/console/api``) and, given a
    ``PipelinesService``, ``/pipelines``."""
    from ui.console_api import router as console_router

    return create_app(
        herder,
        worker_config,
        allow_unauthenticated=allow_unauthenticated,
        pipelines=pipelines,
        routers=[console_router],
    )
