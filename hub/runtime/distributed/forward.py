"""REST writes forwarded to the group leader, authenticated like any other client.

A non-leader answers a write (create, reconfigure, delete, pause, offsets...) by sending the
same request to the leader's advertised REST URL and passing its answer on, as Kafka Connect
does. The forwarded request carries this worker's own credential (``rest.auth.token``, else
``rest.auth.basic``): every worker of a group must therefore share it, and there is no
unauthenticated internal path. ``X-Sluice-Forwarded: 1`` marks forwarded requests in logs.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

import httpx

from hub.runtime.errors import ConflictError, ForwardedError

log = logging.getLogger(__name__)
if logging.getLogger("httpx").level == logging.NOTSET:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per forwarded request

FORWARDED_HEADER = "X-Sluice-Forwarded"
TIMEOUT_S = 60.0


def path(*segments: str | int) -> str:
    """A REST path with every segment quoted (connector names may hold '%', spaces, dots)."""
    return "/" + "/".join(quote(str(s), safe="") for s in segments)


class LeaderForwarder:
    """Sends one request to the leader and returns its JSON answer (None when empty)."""

    def __init__(self, token: str | None, basic: str | None, verify: str | bool = True) -> None:
        headers = {"Accept": "application/json", FORWARDED_HEADER: "1"}
        auth: tuple[str, str] | None = None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        elif basic:
            user, _, password = basic.partition(":")
            auth = (user, password)
        self._http = httpx.Client(headers=headers, auth=auth, timeout=TIMEOUT_S, verify=verify)

    def close(self) -> None:
        self._http.close()

    def send(
        self, leader_url: str, method: str, target: str, body: Any = None, params: Any = None
    ) -> Any:
        return self.send_full(leader_url, method, target, body, params)[1]

    def send_full(
        self, leader_url: str, method: str, target: str, body: Any = None, params: Any = None
    ) -> tuple[int, Any]:
        """``(status, JSON answer or None)``; ForwardedError on an error answer, 409
        (ConflictError) when the leader does not answer at all."""
        try:
            response = self._http.request(
                method, leader_url.rstrip("/") + target, json=body, params=params
            )
        except httpx.HTTPError as exc:
            log.warning("forwarding to the leader failed", extra={"leader": leader_url})
            raise ConflictError(
                f"Cannot complete request: the leader {leader_url} did not answer ({exc}); "
                "retry once the group has rebalanced"
            ) from None
        body_out = response.json() if response.content else None
        if response.status_code >= 400:
            raise ForwardedError(response.status_code, body_out)
        return response.status_code, body_out
