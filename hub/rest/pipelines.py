"""``/pipelines``: Spark pipeline definitions, schedules and runs (``hub.pipelines_service``).

Not part of Kafka Connect's API; shaped like it: names in paths, ``{"error_code", "message"}``
errors, 409 for conflicts. The service hangs off ``app.state.pipelines``; it is created on
first use under ``$SLUICE_PIPELINES_DIR`` (default ``./data/pipelines``) unless the app's
owner set one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request, Response
from pydantic import BaseModel, Field

from hub.pipelines_service import PipelineError, PipelinesService
from hub.rest.errors import RestError
from hub.rest.models import ERRORS

router = APIRouter(prefix="/pipelines", tags=["pipelines"], responses=ERRORS)


def _data_dir() -> Path:
    return Path(os.environ.get("SLUICE_PIPELINES_DIR", "./data/pipelines"))


def _service(request: Request) -> PipelinesService:
    state = request.app.state
    if getattr(state, "pipelines", None) is None:
        state.pipelines = PipelinesService(_data_dir())
    return state.pipelines  # type: ignore[no-any-return]


def install(app: FastAPI, dependencies: Sequence[Any]) -> None:
    """Adds the router; starts the service now if pipelines were defined before a restart.

    Eager start matters for schedules: a hub that restarts must run its cron pipelines without
    waiting for someone to call the API. Apps without saved pipelines (tests, fresh hubs) start
    the service lazily, on the first ``/pipelines`` request.
    """
    app.include_router(router, dependencies=list(dependencies))
    if getattr(app.state, "pipelines", None) is None and (_data_dir() / "pipelines.json").exists():
        app.state.pipelines = PipelinesService(_data_dir())


Service = Annotated[PipelinesService, Depends(_service)]


class PipelineSpec(BaseModel):
    template: str = Field(description="log_aggregation, metrics_rollup, cdc_to_table, ...")
    config: dict[str, Any] = Field(
        description="the template's config (see GET /pipelines/templates)"
    )
    schedule: str | None = Field(None, description="cron expression (UTC) for scheduled runs")
    once: bool = Field(True, description="each run processes what is there, then stops")
    master: str = "local[*]"


class NewPipeline(PipelineSpec):
    name: str = Field(pattern=r"^[A-Za-z0-9._-]+$")


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except PipelineError as exc:
        raise RestError(exc.status, exc.message, exc.errors) from None


@router.get("")
def list_pipelines(service: Service) -> list[dict[str, Any]]:
    """Every pipeline with its state and last run."""
    out = []
    for name in sorted(service.pipelines):
        status = _call(service.status, name)
        last = status["runs"][-1] if status["runs"] else None
        out.append(
            {
                "name": name,
                "template": status["template"],
                "schedule": status["schedule"],
                "state": status["state"],
                "last_run": last,
            }
        )
    return out


@router.get("/templates")
def templates() -> list[dict[str, Any]]:
    """The templates with their config JSON Schema (the console builds its form from it)."""
    from spark_pipelines.templates import NAMES, load

    return [
        {
            "name": n,
            "description": load(n).DESCRIPTION,
            "config_schema": load(n).Config.model_json_schema(),
        }
        for n in NAMES
    ]


@router.post("", status_code=201)
def create(spec: NewPipeline, service: Service) -> dict[str, Any]:
    """Defines a pipeline; 409 if the name is taken."""
    _call(
        service.create,
        spec.name,
        spec.template,
        spec.config,
        schedule=spec.schedule,
        once=spec.once,
        master=spec.master,
    )
    return _call(service.status, spec.name)  # type: ignore[no-any-return]


@router.put("/{name}")
def put(name: str, spec: PipelineSpec, service: Service, response: Response) -> dict[str, Any]:
    """Creates or replaces a pipeline (201 when new)."""
    existed = name in service.pipelines
    _call(
        service.create,
        name,
        spec.template,
        spec.config,
        schedule=spec.schedule,
        once=spec.once,
        master=spec.master,
        replace=True,
    )
    response.status_code = 200 if existed else 201
    return _call(service.status, name)  # type: ignore[no-any-return]


@router.get("/{name}")
def status(name: str, service: Service) -> dict[str, Any]:
    """Definition, state, next scheduled run, last progress and recent runs."""
    return _call(service.status, name)  # type: ignore[no-any-return]


@router.post("/{name}/run", status_code=202)
def run(name: str, service: Service) -> dict[str, Any]:
    """Starts a run now; 409 while one is running."""
    from dataclasses import asdict

    return asdict(_call(service.run_now, name))


@router.post("/{name}/stop", status_code=202)
def stop(name: str, service: Service) -> dict[str, Any]:
    """Stops the running run, if any."""
    return {"stopped": _call(service.stop, name)}


@router.delete("/{name}", status_code=204)
def delete(name: str, service: Service) -> Response:
    """Stops any run and removes the pipeline and its schedule."""
    _call(service.delete, name)
    return Response(status_code=204)
