"""``/console/api/groups``: consumer groups with lag (uncommitted partitions included), the
lag trend the rate sampler keeps, offset resets with a dry run, and deleting a group."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Response

from hub.rest.errors import RestError
from kafka_admin import groups as groups_api
from ui.console_state import ConsoleDep, translated

router = APIRouter(prefix="/groups")


@router.get("")
def list_groups(console: ConsoleDep) -> list[dict[str, Any]]:
    with translated():
        return groups_api.list_groups(console.admin)


@router.get("/{group}")
def get_group(console: ConsoleDep, group: str) -> dict[str, Any]:
    with translated():
        detail = groups_api.describe(console.admin, group)
    return {**detail, "lag_history": console.rates.lag_series(group)}


@router.delete("/{group}", status_code=204)
def delete_group(console: ConsoleDep, group: str) -> Response:
    """Deletes the group and its committed offsets; 409 while it has members."""
    with translated():
        if not groups_api.delete_group(console.admin, group):
            raise RestError(404, f"Group {group} not found")
    return Response(status_code=204)


@router.post("/{group}/reset-offsets")
def reset_offsets(
    console: ConsoleDep, group: str, body: Annotated[dict[str, Any], Body()]
) -> dict[str, Any]:
    """``{"to": "earliest|latest|offset|timestamp", "topic"?, "offset"?, "timestamp"?,
    "dry_run"?}``: the plan per partition (offset, committed before, lag after); written
    unless ``dry_run``."""
    with translated():
        plan = groups_api.reset_offsets(
            console.admin, group, to=str(body.get("to", "")), topic=body.get("topic") or None,
            offset=None if body.get("offset") in (None, "") else int(body["offset"]),
            timestamp_ms=None if body.get("timestamp") in (None, "") else int(body["timestamp"]),
            dry_run=bool(body.get("dry_run")),
        )  # fmt: skip
        return {"group_id": group, "dry_run": bool(body.get("dry_run")), "offsets": plan}
