"""Console sign-in sessions: random ids in an HttpOnly, SameSite=Strict cookie.

Why cookies for the console: a token kept by page script (sessionStorage) can be read by any
script that ever runs on the page; an HttpOnly cookie cannot. The cookie alone must not be
enough to change anything from another site, so state-changing requests that authenticate with
it also need a JSON content type and a same-origin ``Origin`` (``csrf.py``); ``SameSite=Strict``
keeps browsers from sending it on cross-site requests in the first place.

Sessions live in memory: a restart of the hub signs every console out (the page shows the
sign-in form again), and nothing secret is written anywhere. A session ends after
``SESSION_TTL_S`` or at sign-out. The cookie name carries the port because browsers scope
cookies by host, not port: two hubs on one machine must not overwrite each other's session.
Thread-safe (one lock); at most ``MAX_SESSIONS`` live at once, the oldest dropped first.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response

SESSION_TTL_S = 12 * 3600
MAX_SESSIONS = 1000
COOKIE_PREFIX = "sluice_session"


class SessionStore:
    def __init__(
        self, ttl_s: float = SESSION_TTL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._expiry: OrderedDict[str, float] = OrderedDict()

    def create(self) -> str:
        session = secrets.token_urlsafe(32)
        with self._lock:
            self._expiry[session] = self._clock() + self.ttl_s
            while len(self._expiry) > MAX_SESSIONS:
                self._expiry.popitem(last=False)
        return session

    def valid(self, session: str) -> bool:
        if not session:
            return False
        with self._lock:
            expiry = self._expiry.get(session)
            if expiry is None:
                return False
            if expiry < self._clock():
                del self._expiry[session]
                return False
            return True

    def drop(self, session: str) -> None:
        with self._lock:
            self._expiry.pop(session, None)


def cookie_name(request: Request) -> str:
    server = request.scope.get("server")
    port = server[1] if server and len(server) > 1 and server[1] else 0
    return f"{COOKIE_PREFIX}_{port}"


def session_of(request: Request) -> str:
    return request.cookies.get(cookie_name(request), "")


def set_cookie(request: Request, response: Response, session: str) -> None:
    response.set_cookie(
        cookie_name(request),
        session,
        max_age=SESSION_TTL_S,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def clear_cookie(request: Request, response: Response) -> None:
    response.delete_cookie(cookie_name(request), path="/", httponly=True, samesite="strict")
