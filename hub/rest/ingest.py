"""``POST /ingest/{connector}``: webhook bodies handed to a running ``http-webhook`` task.

The router only translates HTTP (the task decides the rest, see connectors/http/webhook.py):
it finds the target (``hub.runtime.ingest``), refuses bodies above the connector's
``webhook.max.body.bytes`` with 413 *while streaming* (a declared Content-Length is checked
first, so an honest oversized request is refused without reading it), then awaits the task's
``ingest_async`` (or calls its blocking ``ingest`` in the thread pool, for a target without
one) and returns its answer. The answer is 2xx only after the broker acknowledged every
record.

Authentication: senders of webhooks (GitHub, Stripe, ...) cannot send the REST API's
credentials, so this route is mounted without them and the connector checks its own bearer
token or HMAC signature. A connector that configures neither falls back to the REST API's
credentials (the ``Authorization`` header only: the console's session cookie is not accepted
here), so adding a webhook never opens an unauthenticated door. Webhook senders are servers,
not browsers, so the CSRF rules do not apply; the ``Host`` allow-list does: a sender must
address the hub by a name it answers to (``rest.advertised.host.name``, ``rest.allowed.hosts``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from hub.rest.auth import AuthPolicy
from hub.rest.errors import RestError
from hub.runtime.errors import IngestUnavailable
from hub.runtime.ingest import find_target

router = APIRouter(tags=["ingest"])


@router.post(
    "/ingest/{connector}",
    summary="Send records to a webhook connector (JSON object, JSON array or NDJSON)",
    response_model=None,
    responses={
        200: {"description": "Every record was acknowledged by the broker: {'accepted': n}."},
        400: {"description": "Malformed body (the message says why)."},
        401: {"description": "Missing or wrong token or signature."},
        404: {"description": "No such connector, or it takes no webhooks."},
        413: {"description": "Body or record count above the connector's limits."},
        429: {"description": "Too many records waiting for the broker; retry after a pause."},
        503: {"description": "Paused, stopping, failed, or the broker did not acknowledge."},
    },
)
async def ingest(connector: str, request: Request) -> JSONResponse:
    herder = request.app.state.herder
    try:
        target = find_target(herder, connector)  # dict lookups under short locks: no thread
    except IngestUnavailable as exc:
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else None
        raise RestError(exc.status, exc.message, headers=headers) from None
    policy: AuthPolicy = request.app.state.auth
    if not target.authenticates and policy.required:
        policy.credentials.require(request)
    body = await _read_limited(request, target.max_body_bytes)
    ingest_async = getattr(target, "ingest_async", None)
    if ingest_async is not None:
        status, payload, headers = await ingest_async(body, dict(request.headers))
    else:
        status, payload, headers = await run_in_threadpool(
            target.ingest, body, dict(request.headers)
        )
    return JSONResponse(payload, status_code=status, headers=headers)


async def _read_limited(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise RestError(413, f"body of {declared} bytes exceeds webhook.max.body.bytes={limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RestError(413, f"body exceeds webhook.max.body.bytes={limit}")
        chunks.append(chunk)
    return b"".join(chunks)
