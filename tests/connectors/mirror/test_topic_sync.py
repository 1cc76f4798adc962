"""What the source connector creates and changes on the target, and how it splits tasks."""

from __future__ import annotations

from connectors.mirror.admin import TopicConfig
from connectors.mirror.filters import (
    CONFIG_PROPERTIES_EXCLUDE_DEFAULT,
    ConfigPropertyFilter,
    IncludeExcludeFilter,
)
from connectors.mirror.policy import DefaultReplicationPolicy
from connectors.mirror.topic_sync import (
    TopicSelector,
    config_changes,
    creation_configs,
    plan_topics,
    round_robin,
)


def entry(name: str, value: str, default: bool = False, **flags: bool) -> TopicConfig:
    return TopicConfig(name, value, default, flags.get("read_only", False),
                       flags.get("sensitive", False), flags.get("static", False))  # fmt: skip


def test_plan_creates_missing_and_grows_smaller_topics() -> None:
    sel = TopicSelector("A", "B", DefaultReplicationPolicy(), IncludeExcludeFilter(".*", ""), True)
    plan = plan_topics(sel, {"new": 3, "grown": 6, "same": 2}, {"A.grown": 4, "A.same": 2})
    assert plan.create == {"A.new": ("new", 3)}
    assert plan.grow == {"A.grown": 6}
    assert plan_topics(sel, {"t": 2}, {"A.t": 5}).grow == {}  # never shrinks


def test_creation_copies_what_was_set_on_the_source() -> None:
    props = ConfigPropertyFilter(CONFIG_PROPERTIES_EXCLUDE_DEFAULT)
    source = [
        entry("retention.ms", "1000"),
        entry("cleanup.policy", "delete", default=True),
        entry("min.insync.replicas", "2"),  # excluded by default
        entry("segment.bytes", "1024", static=True),  # a broker-wide setting, not the topic's
        entry("secret", "x", sensitive=True),
        entry("remote.storage.enable", "true"),  # the target does not know it
    ]
    known = {"retention.ms", "cleanup.policy", "min.insync.replicas", "segment.bytes", "secret"}
    assert creation_configs(source, props, known) == {"retention.ms": "1000"}
    from_source = ConfigPropertyFilter(CONFIG_PROPERTIES_EXCLUDE_DEFAULT, "source")
    assert creation_configs(source, from_source, known) == {
        "retention.ms": "1000", "cleanup.policy": "delete",
    }  # fmt: skip


def test_sync_sends_only_changes_and_resets_to_target_defaults() -> None:
    props = ConfigPropertyFilter(CONFIG_PROPERTIES_EXCLUDE_DEFAULT)
    source = [entry("retention.ms", "2000"), entry("cleanup.policy", "delete", default=True),
              entry("max.message.bytes", "100"), entry("kafka.only", "1")]  # fmt: skip
    target = [entry("retention.ms", "1000"), entry("cleanup.policy", "compact"),
              entry("max.message.bytes", "100")]  # fmt: skip
    assert config_changes(source, target, props) == {
        "retention.ms": "2000", "cleanup.policy": None,
    }  # fmt: skip
    target_default = [entry("retention.ms", "2000"), entry("cleanup.policy", "delete", True)]
    assert config_changes(source, target_default, props) == {}


def test_round_robin_like_mm2() -> None:
    parts = [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1)]
    assert round_robin(parts, 2) == [[("a", 0), ("a", 2), ("b", 1)], [("a", 1), ("b", 0)]]
    assert round_robin(parts, 10) == [[p] for p in parts]
    assert round_robin([], 3) == []
