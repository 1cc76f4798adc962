"""SaslHandshake (key 17) and SaslAuthenticate (key 36): a SASL listener's login.

The exchange itself is ``broker.security.sasl.SaslSession`` (one per connection, on
``ctx.sasl``); these handlers only turn it into responses. On a listener without SASL both
answer ILLEGAL_SASL_STATE, as Kafka does. After a failed SaslAuthenticate the connection loop
closes the connection once the error response is written.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from kio.schema.errors import ErrorCode

from broker.protocol._entities import build
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.sasl import ILLEGAL_SASL_STATE, SaslFailed


@handles(17, 0, 1)
async def sasl_handshake(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    session = ctx.sasl
    if session is None:
        return build(cls, error_code=ErrorCode(ILLEGAL_SASL_STATE), mechanisms=())
    code = session.handshake(request.mechanism, ctx.api_version)
    return build(cls, error_code=ErrorCode(code), mechanisms=session.mechanisms)


@handles(36, 0, 2)
async def sasl_authenticate(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    session = ctx.sasl
    if session is None:
        return build(
            cls, error_code=ErrorCode(ILLEGAL_SASL_STATE), auth_bytes=b"",
            error_message="this listener does not use SASL", session_lifetime=timedelta(0),
        )  # fmt: skip
    try:
        reply = session.authenticate(request.auth_bytes)
    except SaslFailed as exc:
        return build(
            cls, error_code=ErrorCode(exc.code), error_message=exc.message, auth_bytes=b"",
            session_lifetime=timedelta(0),
        )  # fmt: skip
    lifetime = session.lifetime_ms(time.monotonic()) if session.state == "done" else 0
    return build(
        cls, error_code=ErrorCode.none, error_message=None, auth_bytes=reply,
        session_lifetime=timedelta(milliseconds=lifetime),
    )  # fmt: skip
