"""What the group and group-offset handlers share: the active coordinator, entity classes.

The coordinator is absent or inactive while the broker starts or after it lost the
``__consumer_offsets`` leadership; every group API then answers COORDINATOR_NOT_AVAILABLE,
which clients retry after looking the coordinator up again.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.protocol.registry import RequestContext

NOT_AVAILABLE = ErrorCode.coordinator_not_available


def active_coordinator(ctx: RequestContext) -> Any:
    coordinator = ctx.broker.coordinator
    return coordinator if coordinator is not None and coordinator.active else None
