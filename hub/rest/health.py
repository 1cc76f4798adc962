"""``GET /health`` (KIP-1017): is this worker up and able to take requests?

Served *without* credentials, unlike every other Connect route: liveness and readiness probes
(Kubernetes, load balancers) cannot send a token. It reveals nothing a caller could use: the
status word, Connect's fixed message, and which part of the worker is failing, never an error
text, a config value or a connector name (``hub.runtime.health``).

Status codes follow Kafka Connect: 200 healthy, 503 starting, 500 unhealthy. A herder that
does not report health (an embedding's own) answers healthy once it serves requests.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from hub.rest._deps import HerderDep
from hub.rest.models import documented

router = APIRouter(tags=["worker"])

_STATUS_CODES = {"healthy": 200, "starting": 503, "unhealthy": 500}
_HEALTHY = {
    "status": "healthy",
    "message": "Worker has completed startup and is ready to handle requests.",
}


class WorkerStatus(BaseModel):
    status: str = Field(description="healthy, starting or unhealthy")
    message: str


@router.get(
    "/health",
    summary="Worker health for probes (KIP-1017); needs no credentials",
    response_model=None,
    responses={
        200: documented(WorkerStatus, "Started and ready to handle requests."),
        500: documented(WorkerStatus, "Unhealthy: the message says which part is failing."),
        503: documented(WorkerStatus, "Still starting."),
    },
)
def health(herder: HerderDep) -> JSONResponse:
    report = getattr(herder, "health", None)
    body: dict[str, Any] = dict(report()) if callable(report) else dict(_HEALTHY)
    return JSONResponse(body, status_code=_STATUS_CODES.get(body.get("status", ""), 500))
