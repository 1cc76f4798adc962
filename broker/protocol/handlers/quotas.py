"""DescribeClientQuotas (48), AlterClientQuotas (49): client quotas as kafka-configs.sh and
the AdminClient manage them (KIP-546).

Entities are ``user`` and ``client-id`` (a null name is the default entity); the configs are
``producer_byte_rate``, ``consumer_byte_rate`` and ``request_percentage``
(``broker.security.quota``). Each AlterClientQuotas entry succeeds or fails on its own;
``validate_only`` checks without changing anything. Who may call them is the rule table's
business (DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster). In cluster mode the change goes
to ZooKeeper first (``quota_store_zk``), from where every broker picks it up.
"""

from __future__ import annotations

import logging
from typing import Any

from kio.schema.errors import ErrorCode

from broker.protocol._entities import NO_THROTTLE, build, item_class
from broker.protocol.registry import RequestContext, handles, response_class
from broker.security.quota import (
    DEFAULT,
    ClientQuotas,
    Entity,
    QuotaError,
    matches,
    validate_entity,
)

log = logging.getLogger(__name__)


def _store(ctx: RequestContext) -> ClientQuotas:
    assert ctx.broker.quotas is not None, "quotas are set up at broker start"
    return ctx.broker.quotas.quotas


@handles(48, 0, 1)
async def describe_client_quotas(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    components: dict[str, tuple[int, str | None]] = {}
    for c in request.components:
        if c.entity_type in components or c.match_type not in (0, 1, 2):
            why = f"bad filter component {c.entity_type}"
            return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.invalid_request,
                         error_message=why, entries=None)  # fmt: skip
        components[c.entity_type] = (c.match_type, c.match)
    entry_cls = item_class(cls, "entries")
    entity_cls = item_class(entry_cls, "entity")
    value_cls = item_class(entry_cls, "values")
    entries = tuple(
        build(
            entry_cls,
            entity=tuple(
                build(entity_cls, entity_type=t, entity_name=None if n is DEFAULT else n)
                for t, n in target
            ),
            values=tuple(build(value_cls, key=k, value=v) for k, v in sorted(configs.items())),
        )
        for target, configs in _store(ctx).entries()
        if matches(target, components, request.strict)
    )
    return build(cls, throttle_time=NO_THROTTLE, error_code=ErrorCode.none, error_message=None,
                 entries=entries)  # fmt: skip


@handles(49, 0, 1)
async def alter_client_quotas(ctx: RequestContext, request: Any) -> Any:
    cls = response_class(ctx)
    result_cls = item_class(cls, "entries")
    entity_cls = item_class(result_cls, "entity")
    store = _store(ctx)
    results = []
    for entry in request.entries:
        target: Entity = tuple(sorted(
            ((e.entity_type, DEFAULT if e.entity_name is None else e.entity_name)
             for e in entry.entity), key=lambda p: p[0],
        ))  # fmt: skip
        code, message = ErrorCode.none, None
        try:
            validate_entity(target)
            ops = [(op.key, op.value, op.remove) for op in entry.ops]
            ClientQuotas().alter(target, ops)  # every check, on a throw-away set
            if not request.validate_only:
                if ctx.broker.quota_store is not None:  # cluster mode: ZooKeeper first
                    await ctx.broker.quota_store.alter(target, ops)
                store.alter(target, ops)
        except QuotaError as exc:
            code, message = ErrorCode.invalid_request, str(exc)
        except Exception as exc:  # ZooKeeper unreachable ...
            log.exception("cannot persist a client quota change")
            code, message = ErrorCode.unknown_server_error, f"cannot persist: {exc!r}"
        results.append(build(
            result_cls, error_code=code, error_message=message,
            entity=tuple(build(entity_cls, entity_type=e.entity_type, entity_name=e.entity_name)
                         for e in entry.entity),
        ))  # fmt: skip
    return build(cls, throttle_time=NO_THROTTLE, entries=tuple(results))
