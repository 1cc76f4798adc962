"""A small client for a Confluent-compatible Schema Registry (Sluice's or Confluent's).

Used by the Avro/Protobuf/JSON Schema converters and by ``sluice schemas``. Standard library
only (urllib), so importing a converter pulls in nothing heavy, and thread-safe (no shared
connection). Converters cache what they learn (``cached_schema``), so the registry is asked
once per schema id or per new schema, never per record.

``url`` may list several registries separated by commas (``schema.registry.url`` does in
Confluent's clients): each request tries them in order until one answers. Credentials are
Confluent's: ``user:password`` (``basic.auth.user.info``) or a bearer token.
"""

from __future__ import annotations

import base64
import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

MEDIA = "application/vnd.schemaregistry.v1+json"


class RegistryClientError(Exception):
    """A failed call: ``status`` 0 means no registry answered; ``error_code`` is Confluent's."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(f"{message} (HTTP {status}, error code {error_code})")
        self.status = status
        self.error_code = error_code
        self.message = message


@dataclass(frozen=True, slots=True)
class RegisteredSchema:
    id: int
    schema_type: str
    schema: str
    references: tuple[dict[str, Any], ...] = ()
    subject: str | None = None
    version: int | None = None


class RegistryClient:
    def __init__(
        self,
        url: str,
        *,
        basic: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.urls = [u.strip().rstrip("/") for u in url.split(",") if u.strip()]
        if not self.urls:
            raise ValueError("schema.registry.url is empty")
        self.timeout = timeout
        self._headers = {"Accept": MEDIA, "Content-Type": MEDIA}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        elif basic:
            encoded = base64.b64encode(basic.encode("utf-8")).decode("ascii")
            self._headers["Authorization"] = f"Basic {encoded}"
        self._by_id: dict[int, RegisteredSchema] = {}
        self._lock = threading.Lock()

    # -- transport ---------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, **query: Any) -> Any:
        params = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in query.items()
                  if v is not None}  # fmt: skip
        suffix = f"?{urlencode(params)}" if params else ""
        data = json.dumps(body).encode("utf-8") if body is not None else None
        last: Exception | None = None
        for base in self.urls:
            req = urllib.request.Request(
                base + path + suffix, data=data, method=method, headers=self._headers
            )
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                return json.loads(raw) if raw else None
            except urllib.error.HTTPError as exc:
                raw = exc.read()
                try:
                    parsed = json.loads(raw)
                    code = int(parsed.get("error_code", exc.code))
                    message = str(parsed.get("message", exc.reason))
                except (ValueError, AttributeError):
                    code, message = exc.code, raw.decode("utf-8", "replace")[:200] or str(exc)
                raise RegistryClientError(exc.code, code, message) from None
            except (urllib.error.URLError, OSError) as exc:
                last = exc
        raise RegistryClientError(0, 0, f"no schema registry answered at {self.urls}: {last}")

    # -- schemas -----------------------------------------------------------------------------

    def register(
        self, subject: str, schema: str, schema_type: str = "AVRO",
        references: tuple[dict[str, Any], ...] = (),
    ) -> int:  # fmt: skip
        body = _body(schema, schema_type, references)
        result = self.request("POST", f"/subjects/{_seg(subject)}/versions", body)
        schema_id = int(result["id"])
        return schema_id

    def lookup(
        self, subject: str, schema: str, schema_type: str = "AVRO",
        references: tuple[dict[str, Any], ...] = (),
    ) -> RegisteredSchema:  # fmt: skip
        body = _body(schema, schema_type, references)
        return _registered(self.request("POST", f"/subjects/{_seg(subject)}", body))

    def schema_by_id(self, schema_id: int) -> RegisteredSchema:
        """The schema with this id; cached for the client's life (ids never change meaning)."""
        with self._lock:
            hit = self._by_id.get(schema_id)
        if hit is not None:
            return hit
        result = self.request("GET", f"/schemas/ids/{int(schema_id)}")
        found = RegisteredSchema(
            schema_id, str(result.get("schemaType") or "AVRO"), str(result["schema"]),
            tuple(result.get("references") or ()),
        )  # fmt: skip
        with self._lock:
            self._by_id[schema_id] = found
        return found

    def version(
        self, subject: str, version: str | int = "latest", **query: Any
    ) -> RegisteredSchema:
        path = f"/subjects/{_seg(subject)}/versions/{_seg(version)}"
        return _registered(self.request("GET", path, **query))

    def subjects(self, deleted: bool = False) -> list[str]:
        return list(self.request("GET", "/subjects", deleted=deleted or None))

    def versions(self, subject: str) -> list[int]:
        return list(self.request("GET", f"/subjects/{_seg(subject)}/versions"))

    def compatibility(self, subject: str | None = None) -> str:
        path = f"/config/{_seg(subject)}" if subject else "/config"
        query = {"defaultToGlobal": True} if subject else {}
        return str(self.request("GET", path, **query)["compatibilityLevel"])

    def set_compatibility(self, level: str, subject: str | None = None) -> str:
        path = f"/config/{_seg(subject)}" if subject else "/config"
        return str(self.request("PUT", path, {"compatibility": level})["compatibility"])

    def check(
        self, subject: str, schema: str, schema_type: str = "AVRO", version: str = "latest",
        references: tuple[dict[str, Any], ...] = (),
    ) -> tuple[bool, list[str]]:  # fmt: skip
        path = f"/compatibility/subjects/{_seg(subject)}/versions/{_seg(version)}"
        result = self.request("POST", path, _body(schema, schema_type, references), verbose=True)
        return bool(result["is_compatible"]), list(result.get("messages") or [])

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        path = f"/subjects/{_seg(subject)}"
        return list(self.request("DELETE", path, permanent=permanent or None))


def _seg(value: object) -> str:
    return quote(str(value), safe="")


def _body(schema: str, schema_type: str, references: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    body: dict[str, Any] = {"schema": schema}
    if schema_type != "AVRO":
        body["schemaType"] = schema_type
    if references:
        body["references"] = list(references)
    return body


def _registered(result: dict[str, Any]) -> RegisteredSchema:
    return RegisteredSchema(
        int(result["id"]), str(result.get("schemaType") or "AVRO"), str(result["schema"]),
        tuple(result.get("references") or ()), result.get("subject"), result.get("version"),
    )  # fmt: skip
