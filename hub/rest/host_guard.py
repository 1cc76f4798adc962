"""The ``Host`` allow-list: a defence against DNS rebinding.

A web page on ``attacker.example`` can make its own name resolve to 127.0.0.1 after the page
loaded; the browser then treats the hub as the attacker's same-origin server, sends it any
request and reads the answers. The one thing it cannot change is the ``Host`` header, which
still says ``attacker.example``. So every request whose Host is not a name this hub answers to
is refused with 421 (Misdirected Request) before any route runs.

Allowed hosts (the port is ignored: rebinding changes names, not ports):
- loopback names and addresses (``localhost``, ``127.0.0.1``, ``::1``, ...);
- any IP address literal: rebinding needs a name the attacker controls, and a page served
  from an IP address is not cross-origin to anything but that address;
- ``rest.host.name`` (when not a wildcard) and ``rest.advertised.host.name``;
- each name in ``rest.allowed.hosts`` (comma-separated; a leading ``.`` allows subdomains,
  ``*`` turns the check off — only behind a proxy that checks Host itself).

A pure ASGI middleware so it costs one set lookup per request (the webhook ingest path is
measured in tens of thousands of requests per second).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from hub.rest._loopback import LOOPBACK_NAMES, is_loopback
from hub.rest._settings import setting
from hub.runtime.config import WILDCARD_HOSTS

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class HostPolicy:
    """Which ``Host`` header values this hub answers to (see module doc)."""

    def __init__(self, names: Iterable[str] = (), *, any_host: bool = False) -> None:
        self.any_host = any_host
        cleaned = {_hostname(n) for n in names if n and n.strip()}
        self.suffixes = tuple(n for n in cleaned if n.startswith("."))
        self.names = frozenset(n for n in cleaned if not n.startswith(".")) | LOOPBACK_NAMES

    @classmethod
    def from_config(cls, worker_config: Any) -> HostPolicy:
        extra = [
            h.strip() for h in str(setting(worker_config, "rest.allowed.hosts", "")).split(",")
        ]
        bound = str(setting(worker_config, "rest.host.name", "127.0.0.1"))
        advertised = str(setting(worker_config, "rest.advertised.host.name", "") or "")
        names = [n for n in (bound, advertised, *extra) if n.strip() not in WILDCARD_HOSTS]
        return cls([n for n in names if n != "*"], any_host="*" in extra)

    def allows(self, host_header: str) -> bool:
        if self.any_host:
            return True
        host = _hostname(host_header)
        if not host:
            return False
        if host in self.names or host.endswith(self.suffixes) or is_loopback(host):
            return True
        try:
            ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            return False
        return True


class HostGuard:
    """ASGI middleware answering 421 to HTTP requests whose Host the policy refuses."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = ""
            for name, value in scope.get("headers") or ():
                if name == b"host":
                    host = value.decode("latin-1")
                    break
            if not self.policy.allows(host):
                await _refuse(send, host)
                return
        await self.app(scope, receive, send)


def _hostname(host_header: str) -> str:
    """The host part of a Host header value, lower-cased, without port or trailing dot."""
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:8083
        end = host.find("]")
        return host[: end + 1] if end > 0 else host
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


async def _refuse(send: Send, host: str) -> None:
    message = (
        f"Host {host[:100]!r} is not one this hub answers to; add it to rest.allowed.hosts "
        "(or set rest.advertised.host.name) if it is a real name of this hub"
    )
    body = json.dumps({"error_code": 421, "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 421,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
