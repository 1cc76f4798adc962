"""Cross-site request forgery: which state-changing requests a browser may have sent unasked.

A web page the user visits can make the browser send POST/PUT/PATCH/DELETE to the hub (a form,
``fetch`` with ``mode: "no-cors"``), bodies or not; it cannot read the answer, but it need not.
Such requests always carry the attacker page's ``Origin`` (every current browser sends it on
cross-origin requests other than GET/HEAD) and cannot carry an ``Authorization`` header or a
``Content-Type: application/json`` without a CORS preflight, which the hub refuses for origins
it does not list. So, for every unsafe method:

1. an ``Origin`` that is neither this hub's own origin nor listed in
   ``access.control.allow.origin`` is refused (403), whatever the credential — this also stops
   credentials a browser attaches by itself (Basic auth it cached);
2. a request authenticated by the console's session cookie must also be ``application/json``
   and carry a matching ``Origin`` (the console's script sends both on every call);
3. a request with an ``Authorization`` header passes: no browser adds one cross-site unasked.

Command-line clients send no ``Origin`` and are unaffected. The ``Host`` header was already
checked against the allow-list (``host_guard.py``), so "this hub's own origin" is trustworthy.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.requests import Request

from hub.rest.errors import RestError

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class OriginPolicy:
    """Origins (``scheme://host[:port]``) allowed besides the request's own."""

    def __init__(self, allowed_origins: Iterable[str] = ()) -> None:
        listed = [o.strip() for o in allowed_origins if o.strip()]
        self.any_origin = "*" in listed  # CORS "*": Authorization-bearing calls from anywhere
        self.listed = frozenset(_normal(o) for o in listed if o != "*")

    def allowed(self, request: Request, origin: str, *, for_cookie: bool = False) -> bool:
        """Whether ``origin`` may change state here; a cookie never rides on ``*``."""
        given = _normal(origin)
        if given is not None and (given == _own_origin(request) or given in self.listed):
            return True
        return self.any_origin and not for_cookie

    def check(self, request: Request, *, cookie: bool) -> None:
        """Raises 403 when ``request`` (an unsafe method) may be a forgery; see module doc."""
        if request.method not in UNSAFE_METHODS:
            return
        origin = request.headers.get("origin")
        if origin is not None and not self.allowed(request, origin, for_cookie=cookie):
            raise RestError(403, f"Cross-origin request from {origin[:200]} refused")
        if not cookie:
            return
        if origin is None:
            raise RestError(
                403, "A state-changing request signed in by cookie must carry an Origin header"
            )
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise RestError(
                403,
                "A state-changing request signed in by cookie must be sent as application/json",
            )


def _normal(origin: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) with the scheme's default port filled in; None if unparsable
    (``null``, the origin of sandboxed frames and local files, is never allowed)."""
    try:
        parts = urlsplit(origin.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, parts.hostname, port or default


def _own_origin(request: Request) -> tuple[str, str, int] | None:
    return _normal(f"{request.url.scheme}://{request.headers.get('host', '')}")
