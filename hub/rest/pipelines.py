"""``/pipelines``: Spark pipeline definitions, schedules and runs (``hub.pipelines``).

Not part of Kafka Connect's API; shaped like it: names in paths, ``{"error_code", "message"}``
errors, 409 for conflicts. The service is built by the application (``sluice.node``, with the
process's one scheduler and the Spark template catalogue) and handed to ``create_app``; it
hangs off ``app.state.pipelines``. An app built without one has no ``/pipelines`` routes.
Local paths in pipeline configs must lie under the worker's ``file.allowed.paths``, and a
``sql`` statement may only query its views: the templates check both (400 otherwise).
Answers hide Kafka client secrets and URL passwords (``masking.mask_nested``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Path, Request, Response
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field

from hub.pipelines import (
    InvalidPipelineError,
    PipelineConflictError,
    PipelineError,
    PipelineNotFoundError,
    PipelinesService,
    PipelinesUnavailableError,
)
from hub.rest.errors import RestError
from hub.rest.masking import mask_nested, restore_nested
from hub.rest.models import ERRORS, ErrorResponse, documented

router = APIRouter(prefix="/pipelines", tags=["pipelines"], responses=ERRORS)
NAME_MAX_LENGTH = 200
RUN_LOG_TAIL_BYTES = 64 * 1024


def _service(request: Request) -> PipelinesService:
    return request.app.state.pipelines  # type: ignore[no-any-return]


def install(app: FastAPI, service: PipelinesService, dependencies: Sequence[Any]) -> None:
    """Serves ``service`` under ``/pipelines`` (behind ``dependencies``, the API's auth)."""
    app.state.pipelines = service
    app.include_router(router, dependencies=list(dependencies))
    _document_templates(app, list(service.templates.NAMES))


def _document_templates(app: FastAPI, names: list[str]) -> None:
    """Lists the service's template names as the ``enum`` of ``template`` in the OpenAPI
    schema: they are known only once the application handed its catalogue in."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        for model in ("PipelineSpec", "NewPipeline"):
            spec = schema.get("components", {}).get("schemas", {}).get(model)
            if spec is not None and names:
                spec["properties"]["template"]["enum"] = names
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


Service = Annotated[PipelinesService, Depends(_service)]


def _json_error(description: str) -> dict[str, Any]:
    """An error entry for a route whose success is not JSON (its errors still are)."""
    schema = {"$ref": "#/components/schemas/ErrorResponse"}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


class PipelineSpec(BaseModel):
    template: str = Field(description="log_aggregation, metrics_rollup, cdc_to_table, ...")
    config: dict[str, Any] = Field(
        description="the template's config (see GET /pipelines/templates)"
    )
    schedule: str | None = Field(None, description="cron expression (UTC) for scheduled runs")
    once: bool = Field(True, description="each run processes what is there, then stops")
    master: str = "local[*]"


# A directory name under the data directory: no leading dot (so never "." or ".."), bounded.
NAME_PATTERN = r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$"
PipelineName = Annotated[str, Path(pattern=NAME_PATTERN, max_length=NAME_MAX_LENGTH)]


class NewPipeline(PipelineSpec):
    name: str = Field(pattern=NAME_PATTERN, max_length=NAME_MAX_LENGTH)


def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except PipelineError as exc:
        raise RestError(_status(exc), exc.message, exc.errors) from None


def _status(exc: PipelineError) -> int:
    if isinstance(exc, PipelineNotFoundError):
        return 404
    if isinstance(exc, PipelineConflictError):
        return 409
    if isinstance(exc, PipelinesUnavailableError):
        return 501  # this installation lacks Spark: the message names the extra
    return 400 if isinstance(exc, InvalidPipelineError) else 500


def _shown(status: dict[str, Any]) -> dict[str, Any]:
    """A status with Kafka client secrets and URL passwords ``[hidden]`` (masking.py)."""
    return {**status, "config": mask_nested(status.get("config") or {})}


def _kept(service: PipelinesService, name: str, config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with ``[hidden]`` values taken from the stored pipeline (400 if none)."""
    stored = service.pipelines.get(name)
    restored: dict[str, Any] = restore_nested(config, stored.config if stored else None)
    return restored


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
def templates(service: Service) -> list[dict[str, Any]]:
    """The templates with their config JSON Schema (the console builds its form from it)."""
    return service.template_list()


@router.post("", status_code=201)
def create(spec: NewPipeline, service: Service) -> dict[str, Any]:
    """Defines a pipeline; 409 if the name is taken."""
    if spec.name == "templates":  # GET /pipelines/templates lists the templates
        reason = "is reserved (GET /pipelines/templates lists the templates)"
        raise RestError(400, f"Pipeline name 'templates' {reason}", {"name": [reason]})
    _call(
        service.create,
        spec.name,
        spec.template,
        restore_nested(spec.config, None),  # a [hidden] here has nothing to stand for
        schedule=spec.schedule,
        once=spec.once,
        master=spec.master,
    )
    return _shown(_call(service.status, spec.name))


@router.put("/{name}")
def put(
    name: PipelineName, spec: PipelineSpec, service: Service, response: Response
) -> dict[str, Any]:
    """Creates or replaces a pipeline (201 when new)."""
    existed = name in service.pipelines
    _call(
        service.create,
        name,
        spec.template,
        _kept(service, name, spec.config),
        schedule=spec.schedule,
        once=spec.once,
        master=spec.master,
        replace=True,
    )
    response.status_code = 200 if existed else 201
    return _shown(_call(service.status, name))


@router.get("/{name}")
def status(name: str, service: Service) -> dict[str, Any]:
    """Definition, state, next scheduled run, last progress and recent runs."""
    return _shown(_call(service.status, name))


@router.post(
    "/{name}/run",
    status_code=202,
    responses={
        501: documented(ErrorResponse, "Spark is not installed here (pip install 'sluice[spark]').")
    },
)
def run(name: str, service: Service) -> dict[str, Any]:
    """Starts a run now; 409 while one is running, 501 when Spark is not installed."""
    from dataclasses import asdict

    return asdict(_call(service.run_now, name))


@router.get(
    "/{name}/runs/{run_id}/log",
    response_class=PlainTextResponse,
    responses={
        200: {"content": {"text/plain": {}}, "description": "The run's output."},
        **{code: _json_error(entry["description"]) for code, entry in ERRORS.items()},
        404: _json_error("No such pipeline or run."),
    },
)
def run_log(name: str, run_id: str, service: Service) -> PlainTextResponse:
    """The last 64 KiB of a run's output (its Spark and template log lines); 404 for an
    unknown pipeline or run."""
    return PlainTextResponse(_call(service.run_log, name, run_id, RUN_LOG_TAIL_BYTES))


@router.post("/{name}/stop", status_code=202)
def stop(name: str, service: Service) -> dict[str, Any]:
    """Stops the running run, if any."""
    return {"stopped": _call(service.stop, name)}


@router.delete("/{name}", status_code=204)
def delete(name: str, service: Service) -> Response:
    """Stops any run and removes the pipeline and its schedule."""
    _call(service.delete, name)
    return Response(status_code=204)
