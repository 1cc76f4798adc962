"""``OPTIONS`` and ``405``: every answer lists all the methods a path serves in ``Allow``.

FastAPI makes one route per method and path, and Starlette answers a method it has no route
for from the *first* route whose path matched, so ``Allow`` named one method of several and
``OPTIONS`` got a 405. This middleware answers from the documented paths instead (the OpenAPI
document lists every method of every path, read once on the first request):

- ``OPTIONS`` answers 204 with ``Allow`` (Kafka Connect's Jersey answers OPTIONS too);
- a method the path does not serve answers 405 with the complete ``Allow`` and Kafka Connect's
  error body (the router's 405 gets its ``Allow`` completed on the way out, so other methods
  pay nothing for this);
- a path no route matches, and every method a route serves, pass through unchanged.

HEAD is served wherever GET is (the GET endpoint runs, its body is dropped, as Connect's
Jersey does), OPTIONS wherever a path is documented. CORS preflights (``OPTIONS`` with
``Origin`` and ``Access-Control-Request-Method``) never get here when CORS is configured: the
CORS middleware sits outside this one and answers them itself.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.rest.errors import error_response

# The order ``Allow`` lists them in (RFC 9110 gives none; a fixed one makes answers stable).
_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


class AllowedMethods:
    """Pure ASGI middleware over the paths of the app's OpenAPI document (``scope["app"]``),
    so ``Allow`` lists exactly the methods the schema documents for a path. Routes outside
    the schema (the console's pages) are left to the router."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._paths: list[tuple[re.Pattern[str], int, frozenset[str]]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if method not in ("OPTIONS", "HEAD"):
            # The common case costs nothing here: only a 405 from the router is looked at.
            await self.app(scope, receive, self._complete_allow(scope, send))
            return
        allowed = self.allowed_methods(scope)
        if allowed is None:
            await self.app(scope, receive, send)
        elif method == "HEAD" and "GET" in allowed:
            await self.app({**scope, "method": "GET"}, receive, _without_body(send))
        elif method == "OPTIONS":
            await Response(status_code=204, headers=_allow(allowed))(scope, receive, send)
        else:
            response = error_response(405, "HTTP 405 Method Not Allowed", headers=_allow(allowed))
            await response(scope, receive, send)

    def _complete_allow(self, scope: Scope, send: Send) -> Send:
        """Replaces the router's one-method ``Allow`` of a 405 with every documented one."""

        async def checked_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 405:
                allowed = self.allowed_methods(scope)
                if allowed is not None:
                    value = _allow(allowed)["Allow"].encode("latin-1")
                    headers = [(k, v) for k, v in message.get("headers", []) if k != b"allow"]
                    message = {**message, "headers": [*headers, (b"allow", value)]}
            await send(message)

        return checked_send

    def allowed_methods(self, scope: Scope) -> set[str] | None:
        """Methods served at the request's path (HEAD with GET, OPTIONS always); None when
        the schema documents no such path."""
        if self._paths is None:
            self._paths = _documented_paths(scope.get("app"))
        path = scope["path"]
        matches = [(params, served) for pattern, params, served in self._paths
                   if pattern.match(path)]  # fmt: skip
        if not matches:
            return None
        # The most specific documented path wins: /pipelines/templates over /pipelines/{name}.
        fewest = min(params for params, _ in matches)
        methods = {m for params, served in matches if params == fewest for m in served}
        if "GET" in methods:
            methods.add("HEAD")
        methods.add("OPTIONS")
        return methods


def _documented_paths(app: Any) -> list[tuple[re.Pattern[str], int, frozenset[str]]]:
    """(path regex, number of path parameters, methods) for each documented path."""
    openapi = getattr(app, "openapi", None)
    if not callable(openapi):
        return []
    out = []
    for template, operations in openapi().get("paths", {}).items():
        regex = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        methods = frozenset(m.upper() for m in operations if m.upper() in _ORDER)
        out.append((re.compile(regex), template.count("{"), methods))
    return out


def _allow(methods: set[str]) -> dict[str, str]:
    return {"Allow": ", ".join(sorted(methods, key=_rank))}


def _without_body(send: Send) -> Send:
    """HEAD: the GET answer's status and headers (Content-Length included), no body."""

    async def head_send(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return head_send


def _rank(method: str) -> int:
    return _ORDER.index(method) if method in _ORDER else len(_ORDER)
