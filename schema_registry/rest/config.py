"""``/config`` (compatibility levels), ``/mode``, ``/compatibility``, ``/contexts`` and ``/``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from schema_registry import errors
from schema_registry.registry import SchemaRegistry, SchemaRequest
from schema_registry.rest._common import JsonBody, Reg, reply

router = APIRouter(tags=["config"])


def _field(
    body: Any,
    name: str,
) -> Any:
    if not isinstance(body, dict):
        raise errors.BadRequest("The request body must be a JSON object")
    return body.get(name)


@router.get("/")
def root() -> JSONResponse:
    return reply({})


@router.get("/contexts")
def contexts() -> JSONResponse:
    return reply(["."])


@router.get("/config")
def get_global_config(
    reg: Reg,
) -> JSONResponse:
    return reply({"compatibilityLevel": reg.compatibility_level(None)})


@router.put("/config")
def put_global_config(
    body: JsonBody,
    reg: Reg,
) -> JSONResponse:
    return reply({"compatibility": reg.set_compatibility(None, _field(body, "compatibility"))})


@router.delete("/config")
def delete_global_config(
    reg: Reg,
) -> JSONResponse:
    return reply({"compatibilityLevel": reg.delete_compatibility(None)})


@router.get("/config/{subject}")
def get_subject_config(
    subject: str,
    reg: Reg,
    default_to_global: Annotated[bool, Query(alias="defaultToGlobal")] = False,
) -> JSONResponse:
    level = reg.state.compatibility(subject)
    if level is None:
        if not default_to_global:
            raise errors.no_subject_compatibility(subject)
        level = reg.compatibility_level(None)
    return reply({"compatibilityLevel": level})


@router.put("/config/{subject}")
def put_subject_config(
    subject: str,
    body: JsonBody,
    reg: Reg,
) -> JSONResponse:
    return reply({"compatibility": reg.set_compatibility(subject, _field(body, "compatibility"))})


@router.delete("/config/{subject}")
def delete_subject_config(
    subject: str,
    reg: Reg,
) -> JSONResponse:
    return reply({"compatibilityLevel": reg.delete_compatibility(subject)})


@router.get("/mode")
def get_global_mode(
    reg: Reg,
) -> JSONResponse:
    return reply({"mode": reg.mode_of(None)})


@router.put("/mode")
def put_global_mode(
    body: JsonBody,
    reg: Reg,
    force: bool = False,
) -> JSONResponse:
    return reply({"mode": reg.set_mode(None, _field(body, "mode"), force)})


@router.get("/mode/{subject}")
def get_subject_mode(
    subject: str,
    reg: Reg,
    default_to_global: Annotated[bool, Query(alias="defaultToGlobal")] = False,
) -> JSONResponse:
    mode = reg.state.mode(subject)
    if mode is None:
        if not default_to_global:
            raise errors.no_subject_mode(subject)
        mode = reg.mode_of(None)
    return reply({"mode": mode})


@router.put("/mode/{subject}")
def put_subject_mode(
    subject: str,
    body: JsonBody,
    reg: Reg,
    force: bool = False,
) -> JSONResponse:
    return reply({"mode": reg.set_mode(subject, _field(body, "mode"), force)})


@router.delete("/mode/{subject}")
def delete_subject_mode(
    subject: str,
    reg: Reg,
) -> JSONResponse:
    return reply({"mode": reg.delete_mode(subject)})


@router.post("/compatibility/subjects/{subject}/versions/{version}")
def compatibility_one(
    subject: str,
    version: str,
    body: JsonBody,
    reg: Reg,
    verbose: bool = False,
) -> JSONResponse:
    return _compatibility(reg, subject, version, body, verbose)


@router.post("/compatibility/subjects/{subject}/versions")
def compatibility_all(
    subject: str,
    body: JsonBody,
    reg: Reg,
    verbose: bool = False,
) -> JSONResponse:
    return _compatibility(reg, subject, None, body, verbose)


def _compatibility(
    reg: SchemaRegistry,
    subject: str,
    version: str | None,
    body: Any,
    verbose: bool,
) -> JSONResponse:
    problems = reg.check_compatibility(subject, version, SchemaRequest.from_json(body))
    out: dict[str, Any] = {"is_compatible": not problems}
    if verbose:
        out["messages"] = problems
    return reply(out)
