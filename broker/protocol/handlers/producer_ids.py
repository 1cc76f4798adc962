"""InitProducerId (key 22): producer ids for idempotent and transactional producers.

Without a transactional id every call returns a brand-new producer id at epoch 0, as Kafka's
transaction coordinator does; the id comes from the broker's ``ProducerIdAllocator``, which
never repeats an id across restarts, so sequence state kept by a partition log for an old
producer can never be mistaken for a new one's.

With a transactional id the request goes to the ``TransactionCoordinator`` of that id's
``__transaction_state`` partition (FindCoordinator key type 1 names it), which keeps one
producer id per transactional id and bumps its epoch on every call, fencing the previous
instance (see ``broker.transaction.coordinator``). v3+ may carry the producer's current id and
epoch (KIP-360: bump after an abortable error). v6's two-phase-commit mode (KIP-939) is
refused by name.
"""

from __future__ import annotations

import logging
from typing import Any

from kio.schema.errors import ErrorCode

from broker.protocol._entities import NO_THROTTLE, build
from broker.protocol.handlers.transactions import coordinator, fenced_for
from broker.protocol.registry import RequestContext, handles, response_class

log = logging.getLogger(__name__)


@handles(22, 0, 6)
async def init_producer_id(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    if request.transactional_id is not None:
        code, pid, epoch = await _transactional(ctx, request)
        return build(
            cls, throttle_time=NO_THROTTLE, error_code=fenced_for(ctx.api_version, 4, code),
            producer_id=pid, producer_epoch=epoch, ongoing_txn_producer_id=-1,
            ongoing_txn_producer_epoch=-1,
        )  # fmt: skip
    allocator = ctx.broker.producer_ids
    if allocator is None:
        return build(
            cls,
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.coordinator_not_available,
            producer_id=-1,
            producer_epoch=-1,
        )
    allocate_async = getattr(allocator, "allocate_async", None)  # cluster: ids from ZooKeeper
    producer_id = await allocate_async() if allocate_async else allocator.allocate()
    log.debug("allocated producer id", extra={"producer_id": producer_id, "client": ctx.client_id})
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        producer_id=producer_id,
        producer_epoch=0,
        ongoing_txn_producer_id=-1,
        ongoing_txn_producer_epoch=-1,
    )


async def _transactional(ctx: RequestContext, request: Any) -> tuple[ErrorCode, int, int]:
    if getattr(request, "enable2_pc", False) or getattr(request, "keep_prepared_txn", False):
        log.info("two-phase commit (KIP-939) refused", extra={"client": ctx.client_id})
        return ErrorCode.transactional_id_authorization_failed, -1, -1
    txns = coordinator(ctx)
    if txns is None:
        return ErrorCode.coordinator_not_available, -1, -1
    timeout_ms = int(request.transaction_timeout.total_seconds() * 1000)
    result: tuple[ErrorCode, int, int] = await txns.init_producer_id(
        request.transactional_id, timeout_ms, getattr(request, "producer_id", -1),
        getattr(request, "producer_epoch", -1),
    )  # fmt: skip
    return result
