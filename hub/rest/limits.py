"""Bounds on what one REST request may make the worker hold: the body size, refused with 413.

Without a bound, a client can make the worker buffer any body it sends (a 50 MB "config" once
took a worker from 127 to 384 MB, and the memory stayed with the process). The limit is the
worker setting ``rest.request.max.bytes`` (default 1 MiB, Kafka's default ``max.request.size``:
a connector config far larger than that cannot be stored in the config topic anyway).

It is checked without buffering: a declared ``Content-Length`` above the limit is answered at
once, before a byte of the body is read; a chunked body (or one that lies about its length) is
counted as the application reads it, and reading stops with 413 at the first chunk that
crosses the limit. Either way the answer is Kafka Connect's error body and the connection is
closed (``Connection: close``), so the unread rest of the body is never buffered.

``/ingest/...`` is exempt: webhook bodies are bounded per connector by
``webhook.max.body.bytes`` (``hub/rest/ingest.py``), which may be larger or smaller.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.rest._settings import setting
from hub.rest.errors import error_response

MAX_REQUEST_BYTES_KEY = "rest.request.max.bytes"
DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024
EXEMPT_PREFIXES = ("/ingest/",)


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` once a streamed body crosses the limit; answered with 413.

    An ``HTTPException`` so that FastAPI's body parsing lets it through unchanged (it turns
    other exceptions raised while reading into a 400)."""

    def __init__(self, limit: int, declared: int | None = None) -> None:
        size = f"of {declared} bytes " if declared is not None else ""
        super().__init__(413, f"Request body {size}exceeds {MAX_REQUEST_BYTES_KEY}={limit}")


def max_request_bytes(worker_config: Any) -> int:
    """The configured limit; ValueError naming the key when it is not a positive integer."""
    raw = setting(worker_config, MAX_REQUEST_BYTES_KEY, DEFAULT_MAX_REQUEST_BYTES)
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{MAX_REQUEST_BYTES_KEY} must be a positive number of bytes, not {raw!r}")
    return value


class BodyLimit:
    """Pure ASGI middleware (no buffering, no per-request task): see the module docstring."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(EXEMPT_PREFIXES):
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            await _refuse(BodyTooLarge(self.limit, declared), scope, send)
            return
        received = 0
        limit = self.limit

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, counted, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


async def _refuse(exc: BodyTooLarge, scope: Scope, send: Send) -> None:
    response = _response(exc)
    await response(scope, _no_receive, send)


async def _no_receive() -> Message:  # the refusal never reads the body
    return {"type": "http.disconnect"}


def _response(exc: BodyTooLarge) -> JSONResponse:
    return error_response(413, str(exc.detail), headers={"Connection": "close"})


async def _on_body_too_large(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, BodyTooLarge)
    return _response(exc)


def install(app: FastAPI, worker_config: Any) -> None:
    """Adds the limit (from ``rest.request.max.bytes``) and its 413 answer to ``app``."""
    app.add_middleware(BodyLimit, limit=max_request_bytes(worker_config))
    app.add_exception_handler(BodyTooLarge, _on_body_too_large)
