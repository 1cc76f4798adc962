"""InitProducerId (key 22): producer ids for idempotent producers.

Like Kafka's transaction coordinator for a producer without a transactional id, every call
returns a brand-new producer id at epoch 0; the id comes from the broker's
``ProducerIdAllocator``, which never repeats an id across restarts, so sequence state kept by a
partition log for an old producer can never be mistaken for a new one's. Transactions are not
implemented: a request carrying a transactional id is refused, and the client reports it.
"""

from __future__ import annotations

import logging
from typing import Any

from kio.schema.errors import ErrorCode

from broker.protocol._entities import NO_THROTTLE, build
from broker.protocol.registry import RequestContext, handles, response_class

log = logging.getLogger(__name__)


@handles(22, 0, 6)
async def init_producer_id(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    allocator = ctx.broker.producer_ids
    if request.transactional_id is not None or allocator is None:
        return build(
            cls,
            throttle_time=NO_THROTTLE,
            error_code=ErrorCode.transactional_id_authorization_failed
            if request.transactional_id is not None
            else ErrorCode.coordinator_not_available,
            producer_id=-1,
            producer_epoch=-1,
        )
    producer_id = allocator.allocate()
    log.debug("allocated producer id", extra={"producer_id": producer_id, "client": ctx.client_id})
    return build(
        cls,
        throttle_time=NO_THROTTLE,
        error_code=ErrorCode.none,
        producer_id=producer_id,
        producer_epoch=0,
    )
