"""DescribeCluster (key 60): this broker as the whole cluster and its controller.

Admin clients (``AdminClient.describe_cluster``, kafka-python's ``describe_cluster``) use it
instead of Metadata to find the brokers and the cluster id.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.protocol._entities import NO_THROTTLE, build, nested
from broker.protocol.registry import RequestContext, handles, response_class

_BROKERS_ENDPOINT = 1
_OMITTED_OPERATIONS = -2147483648


@handles(60, 0, 2)
async def describe_cluster(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    cfg = ctx.broker.config
    host, port = cfg.advertised_address
    if getattr(request, "endpoint_type", _BROKERS_ENDPOINT) != _BROKERS_ENDPOINT:
        return build(
            cls,
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.unsupported_endpoint_type,
            error_message="this broker only has broker endpoints",
            endpoint_type=request.endpoint_type,
            cluster_id=ctx.broker.cluster_id,
            controller_id=-1,
            brokers=(),
        )
    broker = build(
        nested(cls, "DescribeClusterBroker"),
        broker_id=cfg.node_id,
        host=host,
        port=port,
        rack=cfg.rack,
        is_fenced=False,
    )
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        error_message=None,
        endpoint_type=_BROKERS_ENDPOINT,
        cluster_id=ctx.broker.cluster_id,
        controller_id=cfg.node_id,
        brokers=(broker,),
        cluster_authorized_operations=_OMITTED_OPERATIONS,
    )
