"""ApiVersions (key 18): the version table, built from the handler registry.

Advertised ranges are exactly what handlers registered, so the table cannot drift from the
code. v3+ is flexible; librdkafka sends v3 first and kafka-python v4. A client asking for a
version above ours gets a v0 response with UNSUPPORTED_VERSION plus the table (KIP-511), and
retries with a version we list.
"""

from __future__ import annotations

from typing import Any

from kio.schema.api_versions.v0.response import ApiVersionsResponse as ApiVersionsResponseV0
from kio.schema.errors import ErrorCode

from broker.protocol import registry
from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol.registry import RequestContext, handles, response_class

API_VERSIONS_KEY = 18


def _api_keys(response_cls: Any) -> tuple[Any, ...]:
    entry = nested(response_cls, "ApiVersion")
    return tuple(
        entry(api_key=r.api_key, min_version=r.min_version, max_version=r.max_version)
        for r in registry.registrations()
    )


def unsupported_version_response() -> Any:
    """The v0 answer to an ApiVersions request newer than we implement."""
    return ApiVersionsResponseV0(
        error_code=ErrorCode.unsupported_version,
        api_keys=_api_keys(ApiVersionsResponseV0),
    )


@handles(API_VERSIONS_KEY, 0, 4)
async def api_versions(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    return build(
        cls,
        error_code=ErrorCode.none,
        api_keys=_api_keys(cls),
        throttle_time=NO_THROTTLE,
    )
