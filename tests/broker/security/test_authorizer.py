"""The ACL authorizer's decisions, Kafka's rules one by one (``broker/security/authorizer.py``)."""

from __future__ import annotations

import time

import pytest

from broker.security.acl import (
    AclBinding,
    AclBindingFilter,
    AclError,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
)
from broker.security.authorizer import AclAuthorizer, AuthorizerConfig, authorizer_from_properties
from broker.security.principal import KafkaPrincipal

ALICE = KafkaPrincipal("User", "alice")
BOB = KafkaPrincipal("User", "bob")
T, G, C = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
Op = AclOperation


def acl(
    name: str,
    op: AclOperation,
    who: str = "User:alice",
    *,
    rtype: ResourceType = T,
    pattern: PatternType = PatternType.LITERAL,
    allow: bool = True,
    host: str = "*",
) -> AclBinding:
    perm = PermissionType.ALLOW if allow else PermissionType.DENY
    return AclBinding(rtype, name, pattern, who, host, op, perm)


def make(*acls: AclBinding, everyone: bool = False, supers: str = "") -> AclAuthorizer:
    config = AuthorizerConfig(AuthorizerConfig.parse_super_users(supers), everyone)
    return AclAuthorizer(config, acls)


def test_no_acl_refuses_unless_allow_everyone() -> None:
    assert not make().authorize(ALICE, "h", Op.READ, T, "orders")
    assert make(everyone=True).authorize(ALICE, "h", Op.READ, T, "orders")
    # Once the resource has any ACL, allow.everyone no longer applies to it.
    other = acl("orders", Op.READ, "User:bob")
    assert not make(other, everyone=True).authorize(ALICE, "h", Op.READ, T, "orders")


def test_literal_wildcard_and_prefixed_patterns() -> None:
    a = make(
        acl("orders", Op.READ),
        acl("*", Op.WRITE),
        acl("pay-", Op.DELETE, pattern=PatternType.PREFIXED),
    )
    assert a.authorize(ALICE, "h", Op.READ, T, "orders")
    assert not a.authorize(ALICE, "h", Op.READ, T, "orders2")
    assert a.authorize(ALICE, "h", Op.WRITE, T, "anything")
    assert a.authorize(ALICE, "h", Op.DELETE, T, "pay-eu")
    assert not a.authorize(ALICE, "h", Op.DELETE, T, "pa")
    assert not a.authorize(ALICE, "h", Op.READ, G, "orders")  # types do not mix
    assert not a.authorize(BOB, "h", Op.READ, T, "orders")


def test_deny_wins_and_all_and_wildcard_principal_and_host() -> None:
    a = make(acl("orders", Op.ALL, "User:*"), acl("orders", Op.WRITE, allow=False))
    assert a.authorize(BOB, "h", Op.WRITE, T, "orders")
    assert a.authorize(ALICE, "h", Op.READ, T, "orders")
    assert not a.authorize(ALICE, "h", Op.WRITE, T, "orders")
    hosted = make(acl("orders", Op.READ, host="10.0.0.1"))
    assert hosted.authorize(ALICE, "10.0.0.1", Op.READ, T, "orders")
    assert not hosted.authorize(ALICE, "10.0.0.2", Op.READ, T, "orders")
    deny_all = make(acl("orders", Op.READ), acl("ord", Op.ALL, "User:*", allow=False,
                                               pattern=PatternType.PREFIXED))  # fmt: skip
    assert not deny_all.authorize(ALICE, "h", Op.READ, T, "orders")


def test_implied_operations() -> None:
    for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
        assert make(acl("t", op)).authorize(ALICE, "h", Op.DESCRIBE, T, "t"), op
    assert make(acl("t", Op.ALTER_CONFIGS)).authorize(ALICE, "h", Op.DESCRIBE_CONFIGS, T, "t")
    assert not make(acl("t", Op.DESCRIBE)).authorize(ALICE, "h", Op.READ, T, "t")
    # A DENY of READ does not deny DESCRIBE (deny is never implied).
    a = make(acl("t", Op.DESCRIBE), acl("t", Op.READ, allow=False))
    assert a.authorize(ALICE, "h", Op.DESCRIBE, T, "t")


def test_super_users_and_cache_invalidation() -> None:
    a = make(acl("t", Op.READ, allow=False, who="User:root"), supers="User:root; User:admin")
    root = KafkaPrincipal("User", "root")
    assert a.authorize(root, "h", Op.READ, T, "t")
    assert not a.authorize(ALICE, "h", Op.READ, T, "t")
    a.add([acl("t", Op.READ)])
    assert a.authorize(ALICE, "h", Op.READ, T, "t")  # the cached refusal was dropped
    gone = a.remove(AclBindingFilter(principal="User:alice"))
    assert [g.principal for g in gone] == ["User:alice"]
    assert not a.authorize(ALICE, "h", Op.READ, T, "t")


def test_filters_match_like_kafka() -> None:
    acls = [
        acl("orders", Op.READ),
        acl("*", Op.READ),
        acl("ord", Op.READ, pattern=PatternType.PREFIXED),
        acl("x", Op.READ, rtype=G),
    ]
    a = make(*acls)
    match = AclBindingFilter(T, "orders", PatternType.MATCH)
    assert a.acls(match) == acls[:3]
    assert a.acls(AclBindingFilter(T, "orders", PatternType.ANY)) == acls[:1]
    assert a.acls(AclBindingFilter(resource_type=G)) == acls[3:]
    assert a.acls(AclBindingFilter(pattern_type=PatternType.PREFIXED)) == acls[2:3]


def test_invalid_acls_are_refused() -> None:
    with pytest.raises(AclError):
        make().add([acl("t", Op.ANY)])
    with pytest.raises(AclError):
        make().add([acl("t", Op.READ, who="alice")])
    with pytest.raises(AclError):
        make().add([acl("other", Op.ALTER, rtype=C)])


def test_properties() -> None:
    assert authorizer_from_properties({}) is None
    cfg = authorizer_from_properties({
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:admin;User:hub", "allow.everyone.if.no.acl.found": "true",
    })  # fmt: skip
    assert cfg is not None and cfg.super_users == {"User:admin", "User:hub"}
    assert cfg.allow_everyone_if_no_acl_found
    with pytest.raises(ValueError, match=r"authorizer\.class\.name"):
        authorizer_from_properties({"authorizer.class.name": "com.example.Mine"})


def test_thousand_acls_decide_fast() -> None:
    """The index (not a scan) finds a name's ACLs: 1,000 ACLs of other topics and prefixes
    barely change the cost of an uncached decision."""
    many = [acl(f"topic-{i}", Op.WRITE) for i in range(900)]
    many += [acl(f"p{i}-", Op.READ, pattern=PatternType.PREFIXED) for i in range(100)]
    a = make(*many, acl("orders", Op.WRITE))
    start = time.perf_counter()
    for i in range(2000):
        a._cache.clear()
        assert a.authorize(ALICE, "h", Op.WRITE, T, "orders")
        assert a.authorize(ALICE, "h", Op.READ, T, f"p{i % 100}-x")
    per_decision = (time.perf_counter() - start) / 4000
    assert per_decision < 200e-6, per_decision
