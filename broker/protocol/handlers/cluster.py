"""DescribeCluster (key 60) and DescribeLogDirs (key 35): the cluster as admin tools see it.

Admin clients (``AdminClient.describe_cluster``, kafka-python's ``describe_cluster``) use
DescribeCluster instead of Metadata to find the brokers and the cluster id; Kafka UIs use
DescribeLogDirs for partition sizes.
"""

from __future__ import annotations

import shutil
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
    host, port = ctx.broker.advertised(ctx.listener)
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
    if ctx.broker.cluster is not None:
        from broker.protocol.handlers._cluster_metadata import broker_entries

        return build(
            cls,
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.none,
            error_message=None,
            endpoint_type=_BROKERS_ENDPOINT,
            cluster_id=ctx.broker.cluster_id,
            controller_id=ctx.broker.cluster.cache.controller_id,
            brokers=broker_entries(ctx, nested(cls, "DescribeClusterBroker"), "broker_id"),
            cluster_authorized_operations=_OMITTED_OPERATIONS,
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


@handles(35, 0, 5)
async def describe_log_dirs(ctx: RequestContext, request: Any) -> Any:
    """DescribeLogDirs (key 35): partition sizes on disk, for admin tools and Kafka UIs.

    One log dir (the data dir) holds everything; a single node has no replica lag and no
    "future" replicas being moved between dirs.
    """
    cls = response_class(ctx)
    logs = ctx.broker.logs
    data_dir = ctx.broker.config.data_dir
    topics: list[Any] = []
    if logs is not None:
        known = logs.topics()
        if request.topics is None:
            wanted = [(name, range(info.partitions)) for name, info in sorted(known.items())]
        else:
            wanted = [(t.topic, t.partitions) for t in request.topics if t.topic in known]
        topic_cls = nested(cls, "DescribeLogDirsTopic")
        part_cls = nested(cls, "DescribeLogDirsPartition")
        for name, partitions in wanted:
            parts = []
            for p in partitions:
                if 0 <= p < known[name].partitions:
                    size = logs.log(name, p).size_bytes()
                    parts.append(build(part_cls, partition_index=p, partition_size=size,
                                       offset_lag=0, is_future_key=False))  # fmt: skip
            topics.append(build(topic_cls, name=name, partitions=tuple(parts)))
    usage = shutil.disk_usage(data_dir)
    result = build(
        nested(cls, "DescribeLogDirsResult"),
        error_code=ErrorCode.none if logs is not None else ErrorCode.kafka_storage_error,
        log_dir=str(data_dir.resolve()),
        topics=tuple(topics),
        total_bytes=usage.total,
        usable_bytes=usage.free,
    )
    return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.none, results=(result,))
