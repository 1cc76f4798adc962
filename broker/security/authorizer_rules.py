"""Which ACL every Kafka API needs: one table, so no API can be served without a decision.

Each api key the broker serves has exactly one entry in :data:`RULES` (a test walks the handler
registry and fails on any key missing here). An entry is one of:

- :class:`Open`: no ACL applies (ApiVersions, the SASL handshake: they run before anyone is
  known);
- :class:`Checks`: the connection checks these before calling the handler, and a refusal answers
  the whole request with that error code in every error field (``_unsupported``'s generic walk);
  Kafka's own ``KafkaApis`` does the same for single-resource requests (JoinGroup, EndTxn...);
- :class:`InHandler`: the handler checks each resource itself, because Kafka answers per
  resource (Produce per topic, Metadata filters topics...); the text says what it checks.

The operations and error codes are Kafka's (``KafkaApis`` in Kafka 3.x).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from broker.security.acl import CLUSTER_NAME, AclOperation, ResourceType

if TYPE_CHECKING:
    from broker.protocol.registry import RequestContext
    from broker.security.authorizer import AclAuthorizer

TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53

_ERROR_OF = {
    ResourceType.TOPIC: TOPIC_AUTHORIZATION_FAILED,
    ResourceType.GROUP: GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}

Names = Callable[[Any], Iterable[str]]
Decide = Callable[["AclAuthorizer", "RequestContext", Any], int | None]


@dataclass(frozen=True)
class Open:
    """No ACL applies to this API."""

    why: str


@dataclass(frozen=True)
class InHandler:
    """The handler checks per resource; ``what`` documents the checks."""

    what: str


@dataclass(frozen=True)
class Need:
    """``operation`` on every resource of ``resource_type`` that ``names`` lists."""

    operation: AclOperation
    resource_type: ResourceType
    names: Names = lambda request: (CLUSTER_NAME,)


@dataclass(frozen=True)
class Checks:
    """Checked by the connection before the handler; the first refusal answers the request."""

    needs: tuple[Need, ...] = ()
    decide: Decide | None = None
    """For rules a table cannot say (InitProducerId: transactional or idempotent)."""

    def refusal(self, authorizer: AclAuthorizer, ctx: RequestContext, request: Any) -> int | None:
        """The error code to answer with, or None when the request may go on."""
        for need in self.needs:
            for name in need.names(request):
                if not authorizer.authorize(
                    ctx.principal, ctx.client_host, need.operation, need.resource_type, name
                ):
                    return _ERROR_OF.get(need.resource_type, CLUSTER_AUTHORIZATION_FAILED)
        if self.decide is not None:
            return self.decide(authorizer, ctx, request)
        return None


Rule = Open | Checks | InHandler


def _name(item: Any) -> str:
    if isinstance(item, str):
        return item
    return str(getattr(item, "name", None) or getattr(item, "topic", None) or "")


def _attr(field: str) -> Names:
    """Names from a single string field (``group_id``); absent or empty gives none."""

    def names(request: Any) -> Iterable[str]:
        value = getattr(request, field, None)
        return (value,) if value else ()

    return names


def _each(field: str) -> Names:
    """Names of the elements of an array field (``topics[].name``, ``groups``)."""

    def names(request: Any) -> Iterable[str]:
        return [_name(item) for item in getattr(request, field, None) or ()]

    return names


def _find_coordinator(authorizer: AclAuthorizer, ctx: RequestContext, request: Any) -> int | None:
    keys = getattr(request, "coordinator_keys", None) or (getattr(request, "key", ""),)
    txn = getattr(request, "key_type", 0) == 1
    rtype = ResourceType.TRANSACTIONAL_ID if txn else ResourceType.GROUP
    for key in keys:
        if not authorizer.authorize(
            ctx.principal, ctx.client_host, AclOperation.DESCRIBE, rtype, key
        ):
            return _ERROR_OF[rtype]
    return None


def _init_producer_id(authorizer: AclAuthorizer, ctx: RequestContext, request: Any) -> int | None:
    """Transactional: WRITE on the transactional id. Idempotent: IDEMPOTENT_WRITE on the cluster,
    or WRITE on any topic (KIP-679)."""
    who, host = ctx.principal, ctx.client_host
    if request.transactional_id is not None:
        allowed = authorizer.authorize(
            who, host, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id
        )
        return None if allowed else TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if authorizer.authorize(
        who, host, AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME
    ) or authorizer.may_write_any_topic(who, host):
        return None
    return CLUSTER_AUTHORIZATION_FAILED


def _leader_epochs(authorizer: AclAuthorizer, ctx: RequestContext, request: Any) -> int | None:
    """A follower (replica_id >= 0) needs CLUSTER_ACTION; a client DESCRIBE on each topic."""
    who, host = ctx.principal, ctx.client_host
    if getattr(request, "replica_id", -1) >= 0:
        ok = authorizer.authorize(
            who, host, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME
        )
        return None if ok else CLUSTER_AUTHORIZATION_FAILED
    for topic in request.topics:
        if not authorizer.authorize(
            who, host, AclOperation.DESCRIBE, ResourceType.TOPIC, _name(topic)
        ):
            return TOPIC_AUTHORIZATION_FAILED
    return None


def _offset_fetch_groups(request: Any) -> Iterable[str]:
    groups = getattr(request, "groups", None)
    if groups is None:
        return (request.group_id,)
    return [group.group_id for group in groups]


def _offset_fetch_topics(
    authorizer: AclAuthorizer, ctx: RequestContext, request: Any
) -> int | None:
    """DESCRIBE on each topic the request names (a request for all of a group's offsets names
    none: the group's DESCRIBE covers it, see docs/security.md)."""
    groups = getattr(request, "groups", None)
    lists = [request.topics] if groups is None else [group.topics for group in groups]
    for topics in lists:
        for topic in topics or ():
            if not authorizer.authorize(
                ctx.principal, ctx.client_host, AclOperation.DESCRIBE, ResourceType.TOPIC,
                _name(topic),
            ):  # fmt: skip
                return TOPIC_AUTHORIZATION_FAILED
    return None


_CLUSTER = ResourceType.CLUSTER
_TOPIC = ResourceType.TOPIC
_GROUP = ResourceType.GROUP
_TXN = ResourceType.TRANSACTIONAL_ID
_Op = AclOperation

RULES: dict[int, Rule] = {
    0: InHandler("WRITE on each topic (per topic); WRITE on the transactional id if any"),
    1: InHandler("followers: CLUSTER_ACTION on the cluster; consumers: READ on each topic"),
    2: Checks((Need(_Op.DESCRIBE, _TOPIC, _each("topics")),)),
    3: InHandler("DESCRIBE filters topics; auto-creation needs CREATE on cluster or topic"),
    8: Checks((Need(_Op.READ, _GROUP, _attr("group_id")),)),  # READ per topic: in the handler
    9: Checks((Need(_Op.DESCRIBE, _GROUP, _offset_fetch_groups),), decide=_offset_fetch_topics),
    10: Checks(decide=_find_coordinator),
    11: Checks((Need(_Op.READ, _GROUP, _attr("group_id")),)),
    12: Checks((Need(_Op.READ, _GROUP, _attr("group_id")),)),
    13: Checks((Need(_Op.READ, _GROUP, _attr("group_id")),)),
    14: Checks((Need(_Op.READ, _GROUP, _attr("group_id")),)),
    15: InHandler("DESCRIBE on each group (per group)"),
    16: InHandler("DESCRIBE on the cluster lists every group, else those with DESCRIBE"),
    17: Open("SASL handshake: runs before the client is authenticated"),
    18: Open("ApiVersions: runs before the client is authenticated"),
    19: InHandler("CREATE on the cluster or on each topic (per topic)"),
    20: InHandler("DELETE on each topic (per topic)"),
    21: InHandler("DELETE on each topic (per topic)"),
    22: Checks(decide=_init_producer_id),
    23: Checks(decide=_leader_epochs),
    24: InHandler("WRITE on each transactional id and each topic (per transaction, per topic)"),
    25: Checks(
        (
            Need(_Op.WRITE, _TXN, _attr("transactional_id")),
            Need(_Op.READ, _GROUP, _attr("group_id")),
        )
    ),
    26: Checks((Need(_Op.WRITE, _TXN, _attr("transactional_id")),)),
    27: Checks((Need(_Op.CLUSTER_ACTION, _CLUSTER),)),
    28: Checks(
        (
            Need(_Op.WRITE, _TXN, _attr("transactional_id")),
            Need(_Op.READ, _GROUP, _attr("group_id")),
            Need(_Op.READ, _TOPIC, _each("topics")),
        )
    ),
    29: Checks((Need(_Op.DESCRIBE, _CLUSTER),)),
    30: Checks((Need(_Op.ALTER, _CLUSTER),)),
    31: Checks((Need(_Op.ALTER, _CLUSTER),)),
    32: InHandler("DESCRIBE_CONFIGS on each topic, or on the cluster for a broker (per resource)"),
    33: InHandler("ALTER_CONFIGS on each topic, or on the cluster for a broker (per resource)"),
    35: Checks((Need(_Op.DESCRIBE, _CLUSTER),)),
    36: Open("SaslAuthenticate: runs before the client is authenticated"),
    37: InHandler("ALTER on each topic (per topic)"),
    42: InHandler("DELETE on each group (per group)"),
    43: Checks((Need(_Op.ALTER, _CLUSTER),)),
    44: InHandler("ALTER_CONFIGS on each topic, or on the cluster for a broker (per resource)"),
    45: Checks((Need(_Op.ALTER, _CLUSTER),)),
    46: Checks((Need(_Op.DESCRIBE, _CLUSTER),)),
    47: Checks(
        (Need(_Op.DELETE, _GROUP, _attr("group_id")), Need(_Op.READ, _TOPIC, _each("topics")))
    ),
    48: Checks((Need(_Op.DESCRIBE_CONFIGS, _CLUSTER),)),
    49: Checks((Need(_Op.ALTER_CONFIGS, _CLUSTER),)),
    50: Checks((Need(_Op.DESCRIBE, _CLUSTER),)),
    51: Checks((Need(_Op.ALTER, _CLUSTER),)),
    60: Checks((Need(_Op.DESCRIBE, _CLUSTER),)),
    61: InHandler("READ on each topic (per topic)"),
    65: InHandler("DESCRIBE on each transactional id (per id)"),
    66: InHandler("lists the transactional ids with DESCRIBE"),
}
"""api key -> its authorization rule (module docstring)."""
