"""A small synchronous client for a Kafka Connect-compatible REST API (ours or Apache's).

Used by ``sluice connectors``; it speaks only the documented paths and error shape, so it also
drives a real Kafka Connect worker. Every failure becomes one ``ConnectClientError`` carrying the
status (0 when nothing answered), Connect's message and, for invalid configs, field -> reasons.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

DEFAULT_URL = "http://127.0.0.1:8083"
TIMEOUT_S = 30.0


class ConnectClientError(Exception):
    """A request failed: ``status`` 0 means no answer (refused, timeout, bad URL)."""

    def __init__(self, status: int, message: str, errors: dict[str, list[str]] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors or {}


def _segment(value: str | int) -> str:
    # Names may hold spaces, dots or '%' (not '/'): quote everything so paths stay intact.
    return quote(str(value), safe="")


class ConnectClient:
    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        token: str | None = None,
        basic: str | None = None,
        timeout: float = TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """``basic`` is ``user:password``; ``token`` wins when both are given."""
        self.url = url.rstrip("/")
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        auth: tuple[str, str] | None = None
        if basic and not token:
            user, _, password = basic.partition(":")
            auth = (user, password)
        self._http = httpx.Client(
            base_url=self.url, headers=headers, auth=auth, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ConnectClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Any = None,
        json: Any = None,
    ) -> Any:
        """The decoded JSON body (None when empty); ConnectClientError on any failure."""
        try:
            response = self._http.request(method, path, params=params, json=json)
        except httpx.TimeoutException:
            raise ConnectClientError(0, f"no answer from {self.url} within the timeout") from None
        except httpx.HTTPError as exc:
            raise ConnectClientError(0, f"cannot reach the REST API at {self.url}: {exc}") from None
        if response.status_code >= 400:
            raise _error(response)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise ConnectClientError(
                response.status_code, f"{self.url}{path} did not answer JSON"
            ) from None

    # -- Connect's operations ------------------------------------------------------------

    def connectors(self, expand: tuple[str, ...] = ()) -> Any:
        return self.request("GET", "/connectors", params=[("expand", e) for e in expand])

    def create(self, name: str, config: dict[str, Any]) -> dict[str, Any]:
        return dict(self.request("POST", "/connectors", json={"name": name, "config": config}))

    def config(self, name: str) -> dict[str, str]:
        return dict(self.request("GET", f"/connectors/{_segment(name)}/config"))

    def patch_config(self, name: str, patch: dict[str, str | None]) -> dict[str, Any]:
        return dict(self.request("PATCH", f"/connectors/{_segment(name)}/config", json=patch))

    def status(self, name: str) -> dict[str, Any]:
        return dict(self.request("GET", f"/connectors/{_segment(name)}/status"))

    def action(self, name: str, verb: str) -> None:
        """``pause``, ``resume`` or ``stop``."""
        self.request("PUT", f"/connectors/{_segment(name)}/{verb}")

    def restart(
        self, name: str, *, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        params = {
            "includeTasks": str(include_tasks).lower(),
            "onlyFailed": str(only_failed).lower(),
        }
        result = self.request("POST", f"/connectors/{_segment(name)}/restart", params=params)
        return dict(result) if result else None

    def restart_task(self, name: str, task: int) -> None:
        self.request("POST", f"/connectors/{_segment(name)}/tasks/{_segment(task)}/restart")

    def offsets(self, name: str) -> dict[str, Any]:
        return dict(self.request("GET", f"/connectors/{_segment(name)}/offsets"))

    def alter_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        body = self.request(
            "PATCH", f"/connectors/{_segment(name)}/offsets", json={"offsets": offsets}
        )
        return str(body.get("message", "")) if body else ""

    def reset_offsets(self, name: str) -> str:
        body = self.request("DELETE", f"/connectors/{_segment(name)}/offsets")
        return str(body.get("message", "")) if body else ""

    def delete(self, name: str) -> None:
        self.request("DELETE", f"/connectors/{_segment(name)}")

    def plugins(self, connectors_only: bool = True) -> list[dict[str, Any]]:
        params = {"connectorsOnly": str(connectors_only).lower()}
        return list(self.request("GET", "/connector-plugins", params=params))

    def validate(self, plugin: str, config: dict[str, Any]) -> dict[str, Any]:
        """Connect's ConfigInfos: ``error_count`` and per-key ``errors`` (an invalid config is
        a 200 answer, not a ConnectClientError)."""
        path = f"/connector-plugins/{_segment(plugin)}/config/validate"
        return dict(self.request("PUT", path, json=config))


def _error(response: httpx.Response) -> ConnectClientError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "message" in body:
        errors = body.get("errors") if isinstance(body.get("errors"), dict) else None
        return ConnectClientError(response.status_code, str(body["message"]), errors)
    text = response.text.strip().splitlines()[0] if response.text.strip() else ""
    return ConnectClientError(
        response.status_code, f"HTTP {response.status_code} {response.reason_phrase} {text}".strip()
    )
