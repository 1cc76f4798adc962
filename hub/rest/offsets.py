"""``/connectors/{name}/offsets`` and ``/connectors/{name}/topics``: where a connector is.

Offsets (Connect's KIP-875): GET reads them; PATCH and DELETE change them and only work on a
STOPPED connector, which the herder enforces (409 otherwise). Topics: the topics a connector
has used since its last reset, keyed by connector name as Connect answers.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response, status

from hub.rest._deps import HerderDep
from hub.rest.models import (
    ERRORS,
    ActiveTopics,
    AlterOffsetsRequest,
    ConnectorOffsets,
    Message,
    documented,
)

router = APIRouter(prefix="/connectors", tags=["offsets and topics"])


@router.get(
    "/{name}/offsets",
    summary="The connector's committed offsets",
    response_model=None,
    responses={200: documented(ConnectorOffsets, "Partition -> offset pairs."), **ERRORS},
)
def get_offsets(herder: HerderDep, name: str) -> dict[str, Any]:
    offsets: dict[str, Any] = herder.connector_offsets(name)
    return offsets


@router.patch(
    "/{name}/offsets",
    summary="Alter offsets of a STOPPED connector (a null offset removes a partition's)",
    response_model=None,
    responses={200: documented(Message, "What changed."), **ERRORS},
)
def alter_offsets(herder: HerderDep, name: str, body: AlterOffsetsRequest) -> dict[str, str]:
    entries = [entry.model_dump() for entry in body.offsets]
    return {"message": herder.alter_connector_offsets(name, entries)}


@router.delete(
    "/{name}/offsets",
    summary="Reset all offsets of a STOPPED connector",
    response_model=None,
    responses={200: documented(Message, "What was reset."), **ERRORS},
)
def reset_offsets(herder: HerderDep, name: str) -> dict[str, str]:
    return {"message": herder.reset_connector_offsets(name)}


@router.get(
    "/{name}/topics",
    summary="Topics the connector used since the last reset",
    response_model=None,
    responses={200: documented(dict[str, ActiveTopics], "Keyed by connector name."), **ERRORS},
)
def get_topics(herder: HerderDep, name: str) -> dict[str, dict[str, list[str]]]:
    return {name: {"topics": list(herder.connector_topics(name))}}


@router.put(
    "/{name}/topics/reset",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Forget the connector's active topics",
    response_class=Response,
    responses={202: {"description": "Accepted."}, **ERRORS},
)
def reset_topics(herder: HerderDep, name: str) -> None:
    herder.reset_connector_topics(name)
