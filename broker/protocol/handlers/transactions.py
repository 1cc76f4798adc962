"""Transaction APIs (KIP-98): translate kio requests to ``TransactionCoordinator`` and group
coordinator calls and back.

AddPartitionsToTxn (24; v4+ batch several transactions), AddOffsetsToTxn (25), EndTxn (26),
WriteTxnMarkers (27, broker to broker: markers from a coordinator to a partition leader),
TxnOffsetCommit (28, to the group coordinator), DescribeProducers (61),
DescribeTransactions (65) and ListTransactions (66). InitProducerId (22) is in
``producer_ids``. Versions before KIP-588 (InitProducerId < 4, AddPartitionsToTxn,
AddOffsetsToTxn and EndTxn < 2, TxnOffsetCommit < 3) know no PRODUCER_FENCED and get
INVALID_PRODUCER_EPOCH instead, as Kafka answers them.

No logic here: who may do what is the coordinators' business.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from kio.schema.errors import ErrorCode

from broker.errors import BrokerError, TopicAuthorizationFailedError
from broker.protocol._entities import NO_THROTTLE, build, has_field, item_class, nested
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.acl import AclOperation, ResourceType
from broker.security.authorizer import allowed
from broker.transaction.marker_append import append_marker

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"


def fenced_for(version: int, first_version_knowing_fenced: int, code: ErrorCode) -> ErrorCode:
    """PRODUCER_FENCED as old clients know it (INVALID_PRODUCER_EPOCH)."""
    if code == ErrorCode.producer_fenced and version < first_version_knowing_fenced:
        return ErrorCode.invalid_producer_epoch
    return code


def coordinator(ctx: RequestContext) -> Any:
    txns = ctx.broker.transactions
    return txns if txns is not None and txns.active else None


def _topic_partitions_known(ctx: RequestContext, topic: str, partition: int) -> bool:
    cluster = ctx.broker.cluster
    if cluster is not None:
        assignment = cluster.cache.topics.get(topic)
        return assignment is not None and partition in assignment.partitions
    info = ctx.broker.logs.topics().get(topic) if ctx.broker.logs is not None else None
    return info is not None and 0 <= partition < info.partitions


# ------------------------------------------------------------------ AddPartitionsToTxn

_TXN_ID = ResourceType.TRANSACTIONAL_ID


@handles(24, 0, 5)
async def add_partitions_to_txn(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    txns = coordinator(ctx)
    if has_field(type(request), "transactions"):  # v4+: several transactions
        result_cls = item_class(cls, "results_by_transaction")
        results = []
        for t in request.transactions:
            topics = await _add_one(ctx, cls, txns, t.transactional_id, t.producer_id,
                                    t.producer_epoch, t.topics, t.verify_only)  # fmt: skip
            results.append(build(result_cls, transactional_id=t.transactional_id,
                                 topic_results=topics))  # fmt: skip
        return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.none,
                      results_by_transaction=tuple(results))  # fmt: skip
    topics = await _add_one(
        ctx, cls, txns, request.v3_and_below_transactional_id,
        request.v3_and_below_producer_id, request.v3_and_below_producer_epoch,
        request.v3_and_below_topics, False,
    )  # fmt: skip
    return build(cls, throttle_time=NO_THROTTLE, results_by_topic_v3_and_below=topics)


async def _add_one(
    ctx: RequestContext, cls: Any, txns: Any, txn_id: str, pid: int, epoch: int,
    topics: Any, verify_only: bool,
) -> tuple[Any, ...]:  # fmt: skip
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    unknown = {tp for tp in wanted if not _topic_partitions_known(ctx, *tp)}
    # per transaction and per topic, as Kafka answers: WRITE on the transactional id, then on
    # each topic (the others are then not attempted)
    writable = {n for n, _ in wanted if allowed(ctx, AclOperation.WRITE, ResourceType.TOPIC, n)}
    if not allowed(ctx, AclOperation.WRITE, _TXN_ID, txn_id):
        codes = dict.fromkeys(wanted, ErrorCode.transactional_id_authorization_failed)
    elif len(writable) < len({n for n, _ in wanted}):
        codes = {
            tp: ErrorCode.topic_authorization_failed
            if tp[0] not in writable
            else ErrorCode.operation_not_attempted
            for tp in wanted
        }
    elif txns is None:
        codes = dict.fromkeys(wanted, ErrorCode.coordinator_not_available)
    elif unknown:
        codes = {
            tp: ErrorCode.unknown_topic_or_partition
            if tp in unknown
            else ErrorCode.operation_not_attempted
            for tp in wanted
        }
    else:
        code = await txns.add_partitions(txn_id, pid, epoch, frozenset(wanted), verify_only)
        codes = dict.fromkeys(wanted, fenced_for(ctx.api_version, 2, code))
    topic_cls = nested(cls, "AddPartitionsToTxnTopicResult")
    part_cls = nested(cls, "AddPartitionsToTxnPartitionResult")
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), code in codes.items():
        by_topic.setdefault(topic, []).append(
            build(part_cls, partition_index=partition, partition_error_code=code)
        )
    return tuple(
        build(topic_cls, name=name, results_by_partition=tuple(parts))
        for name, parts in by_topic.items()
    )


# ------------------------------------------------------------------ AddOffsetsToTxn, EndTxn


def offsets_partition(ctx: RequestContext, group_id: str) -> tuple[str, int]:
    """The ``__consumer_offsets`` partition of a group (where its transactional offsets go)."""
    from broker.coordinator.offsets_topic import partition_for

    cluster = ctx.broker.cluster
    if cluster is not None:
        assignment = cluster.cache.topics.get(OFFSETS_TOPIC)
        count = len(assignment.partitions) if assignment is not None else 0
    else:
        info = ctx.broker.logs.topics().get(OFFSETS_TOPIC)
        count = info.partitions if info is not None else 0
    count = count or ctx.broker.config.offsets_topic_num_partitions
    return OFFSETS_TOPIC, partition_for(group_id, count)


@handles(25, 0, 4)
async def add_offsets_to_txn(ctx: RequestContext, request: Any) -> Any:
    txns = coordinator(ctx)
    if txns is None:
        code = ErrorCode.coordinator_not_available
    else:
        tp = offsets_partition(ctx, request.group_id)
        code = await txns.add_partitions(
            request.transactional_id, request.producer_id, request.producer_epoch,
            frozenset({tp}),
        )  # fmt: skip
    return build(response_class(ctx), throttle_time=NO_THROTTLE,
                 error_code=fenced_for(ctx.api_version, 2, code))  # fmt: skip


@handles(26, 0, 5)
async def end_txn(ctx: RequestContext, request: Any) -> Any:
    txns = coordinator(ctx)
    if txns is None:
        code = ErrorCode.coordinator_not_available
    else:
        code = await txns.end_txn(request.transactional_id, request.producer_id,
                                  request.producer_epoch, request.committed)  # fmt: skip
    return build(
        response_class(ctx), throttle_time=NO_THROTTLE,
        error_code=fenced_for(ctx.api_version, 2, code),
        producer_id=request.producer_id, producer_epoch=request.producer_epoch,
    )  # fmt: skip


# ------------------------------------------------------------------ WriteTxnMarkers


@handles(27, 1, 2)
async def write_txn_markers(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    marker_cls = item_class(cls, "markers")
    topic_cls = item_class(marker_cls, "topics")
    part_cls = item_class(topic_cls, "partitions")
    out = []
    for marker in request.markers:
        tps = [(t.name, p) for t in marker.topics for p in t.partition_indexes]
        codes = await asyncio.gather(*(
            append_marker(ctx.broker, topic, partition, marker.producer_id,
                          marker.producer_epoch, marker.transaction_result,
                          marker.coordinator_epoch)
            for topic, partition in tps
        ))  # fmt: skip
        by_topic: dict[str, list[Any]] = {}
        for (topic, partition), code in zip(tps, codes, strict=True):
            by_topic.setdefault(topic, []).append(
                build(part_cls, partition_index=partition, error_code=code)
            )
        out.append(build(
            marker_cls, producer_id=marker.producer_id,
            topics=tuple(build(topic_cls, name=t, partitions=tuple(ps))
                         for t, ps in by_topic.items()),
        ))  # fmt: skip
    return build(cls, markers=tuple(out))


# ------------------------------------------------------------------ TxnOffsetCommit


@handles(28, 0, 5)
async def txn_offset_commit(ctx: RequestContext, request: Any) -> Any:
    from broker.coordinator.records import OffsetValue

    cls = response_class(ctx)
    groups = ctx.broker.coordinator
    now = int(datetime.now(UTC).timestamp() * 1000)
    offsets = {
        (t.name, p.partition_index): OffsetValue(
            p.committed_offset, getattr(p, "committed_leader_epoch", -1),
            p.committed_metadata or "", now,
        )
        for t in request.topics
        for p in t.partitions
    }  # fmt: skip
    if groups is None or not groups.active:
        codes = dict.fromkeys(offsets, ErrorCode.coordinator_not_available)
    else:
        codes = groups.commit_transactional_offsets(
            request.group_id, request.producer_id, request.producer_epoch,
            getattr(request, "generation_id", -1), getattr(request, "member_id", ""), offsets,
        )  # fmt: skip
        if any(c == ErrorCode.none for c in codes.values()):
            durable = await groups.wait_durable(request.group_id)
            if durable != ErrorCode.none:
                codes = {tp: durable if c == ErrorCode.none else c for tp, c in codes.items()}
    topic_cls = item_class(cls, "topics")
    part_cls = item_class(topic_cls, "partitions")
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), code in codes.items():
        by_topic.setdefault(topic, []).append(
            build(part_cls, partition_index=partition,
                  error_code=fenced_for(ctx.api_version, 3, code))
        )  # fmt: skip
    return build(cls, throttle_time=NO_THROTTLE, topics=tuple(
        build(topic_cls, name=t, partitions=tuple(ps)) for t, ps in by_topic.items()
    ))  # fmt: skip


# ------------------------------------------------------------------ Describe / List


@handles(65, 0, 0)
async def describe_transactions(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    state_cls = item_class(cls, "transaction_states")
    topic_cls = item_class(state_cls, "topics")
    txns = coordinator(ctx)
    out = []
    for txn_id in request.transactional_ids:
        code, meta = (
            txns.describe(txn_id) if txns is not None else (ErrorCode.coordinator_not_available,
                                                            None)
        )  # fmt: skip
        if not allowed(ctx, AclOperation.DESCRIBE, _TXN_ID, txn_id):  # per id, as Kafka
            code, meta = ErrorCode.transactional_id_authorization_failed, None
        by_topic: dict[str, list[int]] = {}
        if meta is not None:
            for topic, partition in sorted(meta.partitions):
                by_topic.setdefault(topic, []).append(partition)
        value = meta.value if meta is not None else None
        out.append(build(
            state_cls, error_code=code, transactional_id=txn_id,
            transaction_state=meta.state.kafka_name if meta is not None else "",
            transaction_timeout=timedelta(milliseconds=value.timeout_ms if value else 0),
            # -1 = not started, as Kafka sends it; 0 (the schema default) with an error
            transaction_start_time=datetime.fromtimestamp(
                (value.start_ms if value else 0) / 1000, tz=UTC
            ),
            producer_id=value.producer_id if value else -1,
            producer_epoch=value.producer_epoch if value else -1,
            topics=tuple(build(topic_cls, topic=t, partitions=tuple(ps))
                         for t, ps in by_topic.items()),
        ))  # fmt: skip
    return build(cls, throttle_time=NO_THROTTLE, transaction_states=tuple(out))


@handles(66, 0, 2)
async def list_transactions(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    state_cls = item_class(cls, "transaction_states")
    txns = coordinator(ctx)
    if txns is None:
        return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.coordinator_not_available,
                     unknown_state_filters=(), transaction_states=())  # fmt: skip
    try:
        unknown, found = txns.list_transactions(
            list(request.state_filters), list(request.producer_id_filters),
            getattr(request, "duration_filter", -1),
            getattr(request, "transactional_id_pattern", None),
        )  # fmt: skip
    except Exception as exc:  # a bad pattern (re.error)
        log.info("ListTransactions rejected", extra={"error": str(exc)})
        return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.invalid_request,
                     unknown_state_filters=(), transaction_states=())  # fmt: skip
    return build(
        cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.none,
        unknown_state_filters=tuple(unknown),
        transaction_states=tuple(
            build(state_cls, transactional_id=m.transactional_id, producer_id=m.producer_id,
                  transaction_state=m.state.kafka_name)
            for m in found
            if allowed(ctx, AclOperation.DESCRIBE, _TXN_ID, m.transactional_id)
        ),
    )  # fmt: skip


@handles(61, 0, 0)
async def describe_producers(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    topic_cls = item_class(cls, "topics")
    part_cls = item_class(topic_cls, "partitions")
    producer_cls = item_class(part_cls, "active_producers")
    topics = []
    for t in request.topics:
        parts = []
        permitted = allowed(ctx, AclOperation.READ, ResourceType.TOPIC, t.name)
        for index in t.partition_indexes:
            try:
                if not permitted:  # per topic, as Kafka answers
                    raise TopicAuthorizationFailedError(f"not authorized to read {t.name}")
                if ctx.broker.cluster is not None:
                    plog = ctx.broker.cluster.replicas.require_leader(t.name, index).log
                else:
                    plog = ctx.broker.logs.log(t.name, index)
                states = plog.producer_states()
                code, message = ErrorCode.none, None
            except BrokerError as exc:
                states, code, message = [], exc.error_code, str(exc)
            parts.append(build(
                part_cls, partition_index=index, error_code=code, error_message=message,
                active_producers=tuple(build(producer_cls, **s) for s in states),
            ))  # fmt: skip
        topics.append(build(topic_cls, name=t.name, partitions=tuple(parts)))
    return build(cls, throttle_time=NO_THROTTLE, topics=tuple(topics))
