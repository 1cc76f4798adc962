"""``/console/api/security``: the cluster's ACLs, SCRAM users and client quotas for the
Security page, through ``kafka_admin.security``.

Writes are POST/DELETE on the console API, so they pass the app's ``AuthPolicy`` (credential
or session cookie plus the CSRF rules) like every other change. A password arrives in a JSON
body and goes straight to the broker: it is never echoed in a response, logged, or part of an
error message. A broker without an authorizer answers the ACL APIs with SECURITY_DISABLED;
the list then says so (``{"enabled": false}``) instead of failing the page, and adding an
ACL is 409 with the broker's reason.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Response

from kafka_admin import security as security_api
from ui.console_state import ConsoleDep, translated

router = APIRouter(prefix="/security")


@router.get("/acls")
def list_acls(console: ConsoleDep, principal: str | None = None) -> dict[str, Any]:
    with translated():
        rows = security_api.list_acls(console.admin, principal)
        if not rows and not security_api.authorizer_enabled(console.admin):
            return {"enabled": False, "acls": []}
    return {"enabled": True, "acls": rows}


@router.post("/acls", status_code=201)
def create_acl(console: ConsoleDep, body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    with translated():
        return security_api.create_acl(console.admin, body)


@router.post("/acls/delete")
def delete_acl(console: ConsoleDep, body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    """Removes the one ACL the body names (a POST: DELETE with a body is not portable)."""
    with translated():
        return {"removed": security_api.delete_acl(console.admin, body)}


@router.get("/users")
def list_users(console: ConsoleDep) -> list[dict[str, Any]]:
    with translated():
        return security_api.list_users(console.admin)


@router.post("/users", status_code=204)
def set_user(console: ConsoleDep, body: Annotated[dict[str, Any], Body()]) -> Response:
    """``{"user", "password", "mechanisms"?, "iterations"?}``: creates the user or sets a new
    password. Answers 204 with no body, so the password cannot come back."""
    with translated():
        mechanisms = body.get("mechanisms") or []
        if not isinstance(mechanisms, list):
            raise ValueError("mechanisms must be a list")
        security_api.set_user(
            console.admin, str(body.get("user") or ""), str(body.get("password") or ""),
            [str(m) for m in mechanisms], int(body.get("iterations") or 8192),
        )  # fmt: skip
    return Response(status_code=204)


@router.delete("/users/{user}")
def delete_user(console: ConsoleDep, user: str) -> dict[str, Any]:
    with translated():
        return {"user": user, "deleted": security_api.delete_user(console.admin, user)}


@router.get("/quotas")
def list_quotas(console: ConsoleDep) -> list[dict[str, Any]]:
    with translated():
        return security_api.list_quotas(console.admin)


@router.post("/quotas")
def alter_quotas(console: ConsoleDep, body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    """``{"entity": {"user"?, "client_id"?}, "set"?: {key: number}, "remove"?: [key]}``."""
    with translated():
        entity, set_, remove = body.get("entity"), body.get("set") or {}, body.get("remove") or []
        if not isinstance(entity, dict) or not isinstance(set_, dict):
            raise ValueError('say which entity: {"entity": {"user": "alice"}, "set": {...}}')
        security_api.alter_quotas(console.admin, entity, set_, [str(k) for k in remove])
    return {"entity": entity}
