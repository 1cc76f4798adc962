"""The console's sign-in: a token (or basic user) in, an HttpOnly session cookie out.

``GET /console/session`` tells the page whether it must show the sign-in form (and which
credentials the hub takes); ``POST /console/login`` checks ``{"token"}`` or
``{"user", "password"}`` against the worker's credentials and sets the cookie
(``sessions.py``); ``POST /console/logout`` ends the session. The sign-in itself must be JSON
from the hub's own origin (or no ``Origin``, for scripts), so another site cannot sign a
browser in to a hub with credentials of its choosing. Failed sign-ins answer 401 and are
logged at WARNING without what was typed.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response

from hub.rest.auth import AuthPolicy
from hub.rest.errors import RestError
from hub.rest.sessions import clear_cookie, session_of, set_cookie

log = logging.getLogger(__name__)
router = APIRouter(prefix="/console", include_in_schema=False)


def _policy(request: Request) -> AuthPolicy:
    policy: AuthPolicy = request.app.state.auth
    return policy


@router.get("/session")
def session(request: Request) -> dict[str, Any]:
    policy = _policy(request)
    signed_in = not policy.required or policy.sessions.valid(session_of(request))
    return {
        "required": policy.required,
        "signed_in": signed_in,
        "methods": (["token"] if policy.credentials.token else [])
        + (["basic"] if policy.credentials.basic else []),
    }


@router.post("/login", status_code=204)
def login(request: Request, body: Annotated[dict[str, Any], Body()]) -> Response:
    policy = _policy(request)
    _check_sign_in_request(request, policy)
    if not policy.required:
        return Response(status_code=204)
    if not policy.credentials.accepts_login(body):
        client = request.client.host if request.client else "?"
        log.warning("console sign-in refused", extra={"client": client})
        raise RestError(401, "Invalid credentials")
    response = Response(status_code=204)
    set_cookie(request, response, policy.sessions.create())
    return response


def _check_sign_in_request(request: Request, policy: AuthPolicy) -> None:
    """JSON, from this hub's own origin or from a client that sends none (a script)."""
    origin = request.headers.get("origin")
    if origin is not None and not policy.origins.allowed(request, origin, for_cookie=True):
        raise RestError(403, f"Cross-origin sign-in from {origin[:200]} refused")
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise RestError(403, "Sign in with a JSON body (application/json)")


@router.post("/logout", status_code=204)
def logout(request: Request) -> Response:
    policy = _policy(request)
    policy.origins.check(request, cookie=True)
    policy.sessions.drop(session_of(request))
    response = Response(status_code=204)
    clear_cookie(request, response)
    return response
