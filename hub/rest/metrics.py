"""``GET /metrics``: the worker's Kafka Connect metrics (and pipelines') for Prometheus.

Behind the REST API's authentication like every Connect route: the series name connectors,
topics and pipelines. Prometheus sends the token with ``authorization: {credentials: ...}``
in its scrape config (docs/metrics.md). The registry is the app's own (never the process-wide
default one), so several apps in one process do not mix their series.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from hub.pipelines.metrics import PipelinesCollector
from hub.rest.models import ERRORS
from hub.runtime.metrics import HubCollector

router = APIRouter(tags=["worker"])


def registry_for(herder: Any, pipelines: Any = None) -> CollectorRegistry:
    """The collectors of one app: the herder's worker, and its pipelines service if any."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(HubCollector(herder))
    if pipelines is not None:
        registry.register(PipelinesCollector(pipelines))
    return registry


@router.get(
    "/metrics",
    summary="Prometheus metrics: connector and task status, Connect task metrics, pipelines",
    response_class=Response,
    responses={
        200: {"description": "Prometheus text format 0.0.4.", "content": {CONTENT_TYPE_LATEST: {}}},
        **ERRORS,
    },
)
def metrics(request: Request) -> Response:
    # A plain ``def``: FastAPI runs it on its thread pool, so reading the status store and
    # every task's counters never blocks the event loop.
    body = generate_latest(request.app.state.metrics_registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
