"""``/connectors``: create, read, reconfigure, delete, watch and control connectors.

Only translation happens here: path, query and body become one herder call, and its result
(or error) becomes Kafka Connect's status code and body, with secret values shown as
``[hidden]`` (``masking.py``; a ``[hidden]`` sent back keeps the stored secret). Two checks
stay in the REST layer because Connect puts them there: a connector name must be addressable
in a URL, and a ``name`` inside a config must match the name the request is about (it is
filled in when missing, so GET .../config shows it as Connect does).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Body, Path, Query, Response, status
from fastapi.responses import JSONResponse

from hub.rest._deps import HerderDep, SecretsDep
from hub.rest.errors import RestError
from hub.rest.masking import HIDDEN, restore
from hub.rest.models import (
    ERRORS,
    ConfigValue,
    ConnectorExpansion,
    ConnectorInfo,
    ConnectorName,
    ConnectorStateInfo,
    CreateConnectorRequest,
    NewConnectorConfig,
    TaskInfo,
    TaskState,
    config_strings,
    documented,
)
from hub.runtime import names
from hub.runtime.errors import NotFoundError

log = logging.getLogger(__name__)
router = APIRouter(prefix="/connectors", tags=["connectors"])

_ACCEPTED: dict[int | str, dict[str, Any]] = {
    202: {"description": "Accepted; the change happens asynchronously."}
}
_NO_CONTENT: dict[int | str, dict[str, Any]] = {204: {"description": "Done."}}


def checked_name(name: str) -> str:
    """The trimmed connector name; 400 naming ``name`` when it breaks ``hub.runtime.names``."""
    reason = names.problem(name)
    if reason is not None:
        shown = name if len(name) <= 80 else f"{name[:80]}..."
        raise RestError(400, f"Connector name {shown!r} {reason}", {"name": [reason]})
    return name.strip()


def location(name: str) -> str:
    """The ``Location`` of a connector: header values are Latin-1, so a non-ASCII name is
    percent-encoded (UTF-8), as a URL path must be anyway."""
    return f"/connectors/{quote(name, safe='')}"


def _with_name(name: str, config: dict[str, str]) -> dict[str, str]:
    included = config.get("name")
    if included is not None and included != name:
        reason = f"doesn't match connector name in the URL ({name})"
        raise RestError(
            400, f"Connector name configuration ({included}) {reason}", {"name": [reason]}
        )
    return {**config, "name": name}


@router.get(
    "",
    summary="List connectors (names, or a map with ?expand=status and/or ?expand=info)",
    response_model=None,
    responses={
        200: documented(list[str] | dict[str, ConnectorExpansion], "Names or expansions."),
        **ERRORS,
    },
)
def list_connectors(
    herder: HerderDep,
    secrets: SecretsDep,
    expand: Annotated[list[str], Query(description="status and/or info")] = [],  # noqa: B006
) -> list[str] | dict[str, dict[str, Any]]:
    names = herder.connectors()
    if not expand:
        return list(names)
    expanded: dict[str, dict[str, Any]] = {}
    for name in names:
        entry: dict[str, Any] = {}
        try:
            if "status" in expand:
                entry["status"] = herder.connector_status(name)
            if "info" in expand:
                entry["info"] = secrets.mask_info(herder.connector_info(name))
        except NotFoundError:
            log.debug("connector %s deleted while listing; skipped", name)
            continue
        expanded[name] = entry
    return expanded


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    summary="Create a connector",
    response_model=None,
    responses={201: documented(ConnectorInfo, "The new connector."), **ERRORS},
)
def create_connector(
    herder: HerderDep, secrets: SecretsDep, request: CreateConnectorRequest, response: Response
) -> dict[str, Any]:
    name = checked_name(request.name)
    state = {"RUNNING": "STARTED"}.get(request.initial_state, request.initial_state)
    config = restore(request.config, None, secrets.of(request.config))  # 400 on [hidden]
    info: dict[str, Any] = herder.create_connector(
        name, _with_name(name, config), initial_state=state
    )
    response.headers["Location"] = location(name)
    return secrets.mask_info(info)


@router.get(
    "/{name}",
    summary="Connector info",
    response_model=None,
    responses={200: documented(ConnectorInfo, "Name, config, tasks and type."), **ERRORS},
)
def get_connector(herder: HerderDep, secrets: SecretsDep, name: str) -> dict[str, Any]:
    return secrets.mask_info(herder.connector_info(name))


@router.delete(
    "/{name}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Delete a connector (stops its tasks, drops its config)",
    response_class=Response,
    responses={**_NO_CONTENT, **ERRORS},
)
def delete_connector(herder: HerderDep, name: str) -> None:
    herder.delete_connector(name)


@router.get(
    "/{name}/config",
    summary="Connector config",
    response_model=None,
    responses={200: documented(dict[str, str], "The config."), **ERRORS},
)
def get_config(herder: HerderDep, secrets: SecretsDep, name: str) -> dict[str, Any]:
    return secrets.mask(herder.connector_config(name))


@router.put(
    "/{name}/config",
    summary="Create (201) or replace (200) a connector's config",
    response_model=None,
    responses={
        200: documented(ConnectorInfo, "Updated."),
        201: documented(ConnectorInfo, "Created."),
        **ERRORS,
    },
)
def put_config(
    herder: HerderDep,
    secrets: SecretsDep,
    name: Annotated[ConnectorName, Path()],
    config: Annotated[NewConnectorConfig, Body()],
    response: Response,
) -> dict[str, Any]:
    name = checked_name(name)
    config = restore(config, _stored(herder, name), secrets.of(config))
    created, info = herder.put_connector_config(name, _with_name(name, config))
    if created:
        response.status_code = status.HTTP_201_CREATED
        response.headers["Location"] = location(name)
    return secrets.mask_info(info)


def _stored(herder: Any, name: str) -> dict[str, str] | None:
    try:
        stored: dict[str, str] = herder.connector_config(name)
    except NotFoundError:
        return None
    return stored


@router.patch(
    "/{name}/config",
    summary="Change some config keys (null removes a key)",
    response_model=None,
    responses={200: documented(ConnectorInfo, "Updated."), **ERRORS},
)
def patch_config(
    herder: HerderDep,
    secrets: SecretsDep,
    name: str,
    patch: Annotated[dict[str, ConfigValue | None], Body()],
) -> dict[str, Any]:
    included = patch.get("name")
    if included is not None and included != name:
        _with_name(name, {"name": included})
    stored = herder.connector_config(name)
    merged = {**stored, **{k: v for k, v in patch.items() if v is not None}}
    kept = [k for k in secrets.of(merged) if patch.get(k) == HIDDEN]
    restore({k: HIDDEN for k in kept}, stored, kept)  # 400 when nothing is stored to keep
    patch = {k: v for k, v in patch.items() if k not in kept}  # absent: the stored value stays
    return secrets.mask_info(herder.patch_connector_config(name, patch))


@router.get(
    "/{name}/status",
    summary="Connector and task states",
    response_model=None,
    responses={200: documented(ConnectorStateInfo, "States and worker ids."), **ERRORS},
)
def get_status(herder: HerderDep, name: str) -> dict[str, Any]:
    state: dict[str, Any] = herder.connector_status(name)
    return state


@router.get(
    "/{name}/tasks",
    summary="Task configs",
    response_model=None,
    responses={200: documented(list[TaskInfo], "One entry per task."), **ERRORS},
)
def get_tasks(herder: HerderDep, secrets: SecretsDep, name: str) -> list[dict[str, Any]]:
    return [{**task, "config": config} for task, config in _task_configs(herder, secrets, name)]


@router.post(
    "/{name}/tasks",
    summary="Submit a connector's task configs (between distributed workers, to the leader)",
    status_code=204,
    response_class=Response,
    responses={**_NO_CONTENT, **ERRORS},
)
def put_tasks(
    herder: HerderDep, name: str, configs: Annotated[list[dict[str, Any]], Body()]
) -> None:
    """Kafka Connect's internal endpoint: the worker running a connector sends the task
    configs it generated to the group leader, the config topic's only writer. It needs the
    same credential as every other endpoint; a standalone worker answers 400."""
    herder.put_task_configs(name, configs)


@router.get(
    "/{name}/tasks-config",
    summary="Task configs by task id (deprecated in Kafka Connect 3.7, removed in 4.0)",
    response_model=None,
    responses={200: documented(dict[str, dict[str, str]], "connector-n -> config."), **ERRORS},
)
def get_tasks_config(
    herder: HerderDep, secrets: SecretsDep, name: str
) -> dict[str, dict[str, str | None]]:
    return {
        f"{task['id']['connector']}-{task['id']['task']}": config
        for task, config in _task_configs(herder, secrets, name)
    }


def _task_configs(
    herder: Any, secrets: Any, name: str
) -> list[tuple[dict[str, Any], dict[str, str | None]]]:
    """Each task with its config as Connect shows it: secrets hidden, every value a string."""
    tasks = list(herder.task_configs(name))
    plugin = str(herder.connector_config(name).get("connector.class") or "")
    return [
        (task, config_strings(secrets.mask(task.get("config") or {}, plugin))) for task in tasks
    ]


@router.get(
    "/{name}/tasks/{task}/status",
    summary="One task's state",
    response_model=None,
    responses={200: documented(TaskState, "State, worker id and trace."), **ERRORS},
)
def get_task_status(herder: HerderDep, name: str, task: int) -> dict[str, Any]:
    state: dict[str, Any] = herder.task_status(name, task)
    return state


@router.post(
    "/{name}/tasks/{task}/restart",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Restart one task",
    response_class=Response,
    responses={**_NO_CONTENT, **ERRORS},
)
def restart_task(herder: HerderDep, name: str, task: int) -> None:
    herder.restart_task(name, task)


@router.put(
    "/{name}/pause",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Pause the connector and its tasks",
    response_class=Response,
    responses={**_ACCEPTED, **ERRORS},
)
def pause(herder: HerderDep, name: str) -> None:
    herder.pause_connector(name)


@router.put(
    "/{name}/resume",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Resume a paused or stopped connector",
    response_class=Response,
    responses={**_ACCEPTED, **ERRORS},
)
def resume(herder: HerderDep, name: str) -> None:
    herder.resume_connector(name)


@router.put(
    "/{name}/stop",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Stop the connector and shut its tasks down (config and offsets kept)",
    response_class=Response,
    responses={**_NO_CONTENT, **ERRORS},
)
def stop(herder: HerderDep, name: str) -> None:
    herder.stop_connector(name)


@router.post(
    "/{name}/restart",
    summary="Restart the connector, and with includeTasks its tasks",
    response_model=None,
    responses={
        202: documented(ConnectorStateInfo, "Restart requested; states at that moment."),
        **_NO_CONTENT,
        **ERRORS,
    },
)
def restart(
    herder: HerderDep,
    name: str,
    include_tasks: Annotated[bool, Query(alias="includeTasks")] = False,
    only_failed: Annotated[bool, Query(alias="onlyFailed")] = False,
) -> Response | dict[str, Any]:
    result = herder.restart_connector(name, include_tasks, only_failed)
    if not include_tasks and not only_failed:
        # Connect's original restart: connector instance only, no body.
        return Response(status_code=status.HTTP_204_NO_CONTENT)
    body = result if result is not None else herder.connector_status(name)
    return JSONResponse(body, status_code=status.HTTP_202_ACCEPTED)
