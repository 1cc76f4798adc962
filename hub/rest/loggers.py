"""``/admin/loggers``: read and change this worker's log levels at runtime, as Connect does.

Levels use Kafka's names (TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF) mapped onto Python's
numeric levels; WARNING and CRITICAL are accepted too. Setting a level on a logger also sets it
on every existing descendant that had its own level, so ``PUT /admin/loggers/hub`` really
changes everything under ``hub.`` — Connect's namespace semantics — and the answer lists every
logger whose effective level changed. Levels live in the process, not in the herder: they are
per worker by nature, and a restart goes back to the configured levels.
"""

from __future__ import annotations

import logging
import time
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from hub.rest.errors import RestError
from hub.rest.models import ERRORS, LoggerLevel, SetLoggerLevel, documented

router = APIRouter(prefix="/admin/loggers", tags=["admin"])

TRACE = 5
_TO_PYTHON = {
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "WARNING": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "CRITICAL": logging.CRITICAL,
    "OFF": logging.CRITICAL + 10,
}
_ROOT = "root"


def python_level(kafka_level: str) -> int:
    """Python's level for a Kafka level name; 400 naming ``level`` when unknown."""
    name = kafka_level.strip()
    level = _TO_PYTHON.get(name.upper()) if name.isascii() else None
    if level is None:
        reason = f"must be one of {', '.join(_TO_PYTHON)}"
        raise RestError(400, f"Invalid log level '{kafka_level}': {reason}", {"level": [reason]})
    return level


def kafka_level(level: int) -> str:
    """Kafka's name for a Python level (levels between names round up to the next name)."""
    for name, threshold in (
        ("TRACE", TRACE),
        ("DEBUG", logging.DEBUG),
        ("INFO", logging.INFO),
        ("WARN", logging.WARNING),
        ("ERROR", logging.ERROR),
        ("FATAL", logging.CRITICAL),
    ):
        if level <= threshold:
            return name
    return "OFF"


def _known() -> dict[str, logging.Logger]:
    loggers = {
        name: logger
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    loggers[_ROOT] = logging.getLogger()
    return loggers


def _describe(request: Request, name: str, logger: logging.Logger) -> dict[str, Any]:
    modified: dict[str, int] = request.app.state.logger_levels_modified
    return {"level": kafka_level(logger.getEffectiveLevel()), "last_modified": modified.get(name)}


@router.get(
    "",
    summary="The root logger and every logger whose level was set explicitly",
    response_model=None,
    responses={200: documented(dict[str, LoggerLevel], "Keyed by logger name."), **ERRORS},
)
def list_loggers(request: Request) -> dict[str, dict[str, Any]]:
    # As Connect: only loggers with their own level; the rest just inherit (GET one by name).
    return {
        name: _describe(request, name, logger)
        for name, logger in sorted(_known().items())
        if name == _ROOT or logger.level != logging.NOTSET
    }


@router.get(
    "/{name}",
    summary="One logger's effective level",
    response_model=None,
    responses={200: documented(LoggerLevel, "Level and last change."), **ERRORS},
)
def get_logger(request: Request, name: str) -> dict[str, Any]:
    logger = _known().get(name)
    if logger is None:
        raise RestError(404, f"Logger {name} not found.")
    return _describe(request, name, logger)


@router.put(
    "/{name}",
    summary="Set the level of a logger and everything under it",
    response_model=None,
    responses={
        200: documented(list[str], "Loggers whose level changed (scope=worker)."),
        204: {"description": "Applied (scope=cluster; this hub applies it on this worker)."},
        **ERRORS,
    },
)
def set_level(
    request: Request,
    name: str,
    body: SetLoggerLevel,
    scope: Annotated[str, Query(description="worker (default) or cluster")] = "worker",
) -> Response | list[str]:
    level = python_level(body.level)
    target = logging.getLogger() if name == _ROOT else logging.getLogger(name)
    prefix = "" if name == _ROOT else name + "."
    affected = [name]
    for other_name, other in _known().items():
        if other_name != _ROOT and other_name.startswith(prefix) and other is not target:
            affected.append(other_name)
            if other.level != logging.NOTSET:
                other.setLevel(level)
    target.setLevel(level)
    now = int(time.time() * 1000)
    modified: dict[str, int] = request.app.state.logger_levels_modified
    for affected_name in affected:
        modified[affected_name] = now
    if scope.lower() == "cluster":
        return Response(status_code=204)
    return sorted(affected)
