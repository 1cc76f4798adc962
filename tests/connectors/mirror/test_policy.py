"""Replication policies: remote names, where a topic came from, and cycle detection."""

from __future__ import annotations

import pytest

from connectors.mirror.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    make_policy,
)
from connectors.mirror.topic_sync import TopicSelector


def test_default_policy_names_remote_topics_after_the_source() -> None:
    policy = DefaultReplicationPolicy()
    assert policy.format_remote_topic("us-west", "orders") == "us-west.orders"
    assert policy.topic_source("us-west.orders") == "us-west"
    assert policy.upstream_topic("us-west.orders") == "orders"
    assert policy.topic_source("orders") is None
    assert policy.original_topic("b.a.orders") == "orders"
    assert policy.upstream_topic("b.a.orders") == "a.orders"


@pytest.mark.parametrize(
    ("topic", "source"),
    [("a.", None), (".a", ""), ("..", None), ("a..b", "a"), ("", None), ("a.b.", "a")],
)
def test_topic_source_splits_like_java(topic: str, source: str | None) -> None:
    """Java's String.split drops trailing empty parts; MM2 decides remote-ness on that."""
    assert DefaultReplicationPolicy().topic_source(topic) == source


def test_custom_separator_and_internal_topics() -> None:
    policy = DefaultReplicationPolicy("_", internal_separator_enabled=True)
    assert policy.format_remote_topic("a", "t") == "a_t"
    assert policy.offset_syncs_topic("b") == "mm2-offset-syncs_b_internal"
    assert policy.checkpoints_topic("a") == "a_checkpoints_internal"
    legacy = DefaultReplicationPolicy("_", internal_separator_enabled=False)
    assert legacy.offset_syncs_topic("b") == "mm2-offset-syncs.b.internal"
    assert legacy.checkpoints_topic("a") == "a.checkpoints.internal"


def test_internal_topics() -> None:
    policy = DefaultReplicationPolicy()
    for topic in ("__consumer_offsets", ".hidden", "connect-offsets-internal",
                  "mm2-offset-syncs.b.internal", "a.checkpoints.internal"):  # fmt: skip
        assert policy.is_internal_topic(topic), topic
    assert not policy.is_internal_topic("orders")
    assert policy.is_heartbeats_topic("a.b.heartbeats")
    assert policy.is_checkpoints_topic("a.checkpoints.internal")


def test_identity_policy_keeps_names_except_heartbeats() -> None:
    policy = make_policy(
        "org.apache.kafka.connect.mirror.IdentityReplicationPolicy", ".", True, "A"
    )
    assert isinstance(policy, IdentityReplicationPolicy)
    assert policy.format_remote_topic("A", "orders") == "orders"
    assert policy.format_remote_topic("A", "heartbeats") == "A.heartbeats"
    assert policy.topic_source("orders") == "A"
    assert policy.topic_source("B.heartbeats") == "B"


def _selector(policy: DefaultReplicationPolicy, source: str = "A", target: str = "B",
              include: str = ".*") -> TopicSelector:  # fmt: skip
    from connectors.mirror.filters import TOPICS_EXCLUDE_DEFAULT, IncludeExcludeFilter

    topics = IncludeExcludeFilter(include, TOPICS_EXCLUDE_DEFAULT)
    return TopicSelector(source, target, policy, topics, heartbeats_replication=True)


def test_cycles_are_not_mirrored_back() -> None:
    sel = _selector(DefaultReplicationPolicy())
    assert sel.replicates("orders")
    assert not sel.replicates("B.orders")  # came from the target
    assert not sel.replicates("C.B.orders")  # came from the target two hops ago
    assert sel.replicates("C.orders")  # from a third cluster: onward
    assert not sel.replicates("mm2-offset-syncs.B.internal")
    assert not sel.replicates("__consumer_offsets")


def test_heartbeats_follow_their_own_switch() -> None:
    sel = _selector(DefaultReplicationPolicy(), include="orders")
    assert sel.replicates("heartbeats") and sel.replicates("C.heartbeats")
    assert not sel.replicates("B.heartbeats")  # the target's own, one hop back: a cycle
    assert not sel.replicates("payments")


def test_identity_policy_cannot_see_cycles() -> None:
    """As in Kafka: IdentityReplicationPolicy does not prevent loops (documented)."""
    sel = _selector(make_policy("IdentityReplicationPolicy", ".", True, "A"))
    assert sel.replicates("orders")
    assert not sel.replicates("B.heartbeats")
