"""The ACL authorizer: may this principal, from this host, do this operation on this resource?

Kafka's rules (``AclAuthorizer``/``StandardAuthorizer``), in order:

1. a principal in ``super.users`` may do everything;
2. the ACLs that apply are those on the resource's LITERAL name, on the LITERAL ``*`` of its
   type, and on every PREFIXED pattern that the name starts with; if there are none at all,
   the answer is ``allow.everyone.if.no.acl.found`` (false by default);
3. a matching DENY (principal or ``User:*``, host or ``*``, the operation or ALL) refuses:
   deny wins over any allow;
4. a matching ALLOW of the operation, of ALL, or of an operation implying it (READ, WRITE,
   DELETE, ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS) permits;
5. otherwise refused.

Speed: the produce path asks once per topic per request. ACLs are indexed by (type, literal
name) and by (type, prefix) with the set of prefix lengths per type, so finding the ACLs of a
name costs one dict lookup per distinct prefix length, not a scan of every ACL; decisions are
cached per (principal, host, operation, type, name), and the cache is dropped whenever the ACLs
change. Thread safety: the event loop is the only caller (handlers and ACL changes run on it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from broker.security.acl import (
    IMPLIED,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from broker.security.principal import KafkaPrincipal

if TYPE_CHECKING:
    from broker.protocol.registry import RequestContext

log = logging.getLogger(__name__)

AUTHORIZER_CLASS_NAMES = frozenset(
    {
        "kafka.security.authorizer.AclAuthorizer",
        "kafka.security.auth.SimpleAclAuthorizer",
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    }
)
"""``authorizer.class.name`` values that mean this authorizer (Kafka's ZooKeeper-era, older and
KRaft names); any other value is refused at start-up rather than silently not enforced."""

_CACHE_LIMIT = 100_000
_Key = tuple[ResourceType, str]


@dataclass(frozen=True)
class AuthorizerConfig:
    """``authorizer.class.name``, ``super.users`` and ``allow.everyone.if.no.acl.found``."""

    super_users: frozenset[str] = frozenset()
    allow_everyone_if_no_acl_found: bool = False

    @staticmethod
    def parse_super_users(value: str) -> frozenset[str]:
        """``User:alice;User:bob`` (Kafka separates them with ``;``) -> the set of principals."""
        out = set()
        for item in value.split(";"):
            item = item.strip()
            if item:
                KafkaPrincipal.parse(item)  # refuses text without a Type:
                out.add(item)
        return frozenset(out)


@dataclass
class _Index:
    literal: dict[_Key, list[AclBinding]] = field(default_factory=dict)
    prefixed: dict[_Key, list[AclBinding]] = field(default_factory=dict)
    prefix_lengths: dict[ResourceType, list[int]] = field(default_factory=dict)


class AclAuthorizer:
    """Kafka's ACL authorizer over an in-memory index. Persisting a change is the caller's
    (the ACL APIs write it to ``acl_store``/``acl_store_zk``); ``on_change`` is for tests."""

    def __init__(
        self,
        config: AuthorizerConfig,
        acls: Iterable[AclBinding] = (),
        on_change: Callable[[list[AclBinding]], None] | None = None,
    ) -> None:
        self.config = config
        self._acls: dict[AclBinding, None] = dict.fromkeys(acls)  # ordered set
        self._on_change = on_change
        self._index = _Index()
        self._cache: dict[tuple[str, str, AclOperation, ResourceType, str], bool] = {}
        self._reindex()

    # -- decisions --------------------------------------------------------------------------

    def authorize(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        """True if ``principal`` from ``host`` may do ``operation`` on the named resource."""
        who = str(principal)
        key = (who, host, operation, resource_type, name)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        decision = self._decide(who, host, operation, resource_type, name)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = decision
        return decision

    def _decide(
        self, who: str, host: str, operation: AclOperation, rtype: ResourceType, name: str
    ) -> bool:
        if who in self.config.super_users:
            return True
        acls = self.matching_acls(rtype, name)
        if not acls:
            return self.config.allow_everyone_if_no_acl_found
        allowed_ops = IMPLIED.get(operation, frozenset()) | {operation, AclOperation.ALL}
        allow = False
        for acl in acls:
            if acl.principal not in (who, WILDCARD_PRINCIPAL) or acl.host not in (host, WILDCARD):
                continue
            if acl.permission == PermissionType.DENY:
                if acl.operation in (operation, AclOperation.ALL):
                    return False
            elif acl.operation in allowed_ops:
                allow = True
        return allow

    def matching_acls(self, rtype: ResourceType, name: str) -> list[AclBinding]:
        """Every ACL that applies to the resource: its literal name, ``*``, its prefixes."""
        index = self._index
        out: list[AclBinding] = []
        out += index.literal.get((rtype, name), ())
        if name != WILDCARD:
            out += index.literal.get((rtype, WILDCARD), ())
        for length in index.prefix_lengths.get(rtype, ()):
            if length > len(name):
                break
            out += index.prefixed.get((rtype, name[:length]), ())
        return out

    def may_write_any_topic(self, principal: KafkaPrincipal, host: str) -> bool:
        """Kafka (KIP-679): WRITE on any topic implies IDEMPOTENT_WRITE on the cluster. True if
        some ALLOW WRITE/ALL topic ACL names this principal and host and no DENY of that very
        pattern cancels it."""
        who = str(principal)
        if who in self.config.super_users:
            return True
        for acl in self._acls:
            if (
                acl.resource_type == ResourceType.TOPIC
                and acl.permission == PermissionType.ALLOW
                and acl.operation in (AclOperation.WRITE, AclOperation.ALL)
                and acl.principal in (who, WILDCARD_PRINCIPAL)
                and acl.host in (host, WILDCARD)
                and self.authorize(
                    principal, host, AclOperation.WRITE, ResourceType.TOPIC, acl.resource_name
                )
            ):
                return True
        return False

    # -- changes ----------------------------------------------------------------------------

    def acls(self, selector: AclBindingFilter | None = None) -> list[AclBinding]:
        """The ACLs a filter selects (all of them without one), in creation order."""
        if selector is None:
            return list(self._acls)
        return [acl for acl in self._acls if selector.matches(acl)]

    def add(self, bindings: Iterable[AclBinding]) -> None:
        """Adds ACLs (each validated first; adding an existing one is a no-op, as in Kafka)."""
        new = list(bindings)
        for acl in new:
            acl.validate()
        self._acls.update(dict.fromkeys(new))
        self._changed()
        for acl in new:
            log.info("acl added", extra={"acl": str(acl)})

    def remove(self, selector: AclBindingFilter) -> list[AclBinding]:
        """Removes and returns the ACLs the filter selects."""
        gone = self.acls(selector)
        for acl in gone:
            del self._acls[acl]
        if gone:
            self._changed()
            for acl in gone:
                log.info("acl removed", extra={"acl": str(acl)})
        return gone

    def replace_all(self, acls: Iterable[AclBinding]) -> None:
        """Takes another node's ACL set as is (cluster mode: ZooKeeper changed); not persisted
        again, the store it came from is the source."""
        self._acls = dict.fromkeys(acls)
        self._reindex()

    def _changed(self) -> None:
        self._reindex()
        if self._on_change is not None:
            self._on_change(list(self._acls))

    def _reindex(self) -> None:
        index = _Index()
        lengths: dict[ResourceType, set[int]] = {}
        for acl in self._acls:
            key = (acl.resource_type, acl.resource_name)
            if acl.pattern_type == PatternType.PREFIXED:
                index.prefixed.setdefault(key, []).append(acl)
                lengths.setdefault(acl.resource_type, set()).add(len(acl.resource_name))
            else:
                index.literal.setdefault(key, []).append(acl)
        index.prefix_lengths = {rtype: sorted(ls) for rtype, ls in lengths.items()}
        self._index = index
        self._cache = {}


def authorizer_from_properties(values: Mapping[str, str]) -> AuthorizerConfig | None:
    """The authorizer settings from broker properties; None when ``authorizer.class.name`` is
    unset or empty (Kafka: no authorizer, everything allowed). Unknown class names raise."""
    name = values.get("authorizer.class.name", "").strip()
    if not name:
        return None
    if name not in AUTHORIZER_CLASS_NAMES:
        raise ValueError(
            f"authorizer.class.name {name!r} is not supported; use one of "
            + ", ".join(sorted(AUTHORIZER_CLASS_NAMES))
        )
    allow = values.get("allow.everyone.if.no.acl.found", "false").strip().lower()
    if allow not in ("true", "false"):
        raise ValueError(f"allow.everyone.if.no.acl.found: expected true or false, got {allow!r}")
    return AuthorizerConfig(
        super_users=AuthorizerConfig.parse_super_users(values.get("super.users", "")),
        allow_everyone_if_no_acl_found=allow == "true",
    )


def allowed(ctx: RequestContext, operation: AclOperation, rtype: ResourceType, name: str) -> bool:
    """What a handler asks per resource (``authorizer_rules.InHandler``); always True when the
    broker has no authorizer."""
    authorizer = ctx.broker.authorizer
    return authorizer is None or authorizer.authorize(
        ctx.principal, ctx.client_host, operation, rtype, name
    )
