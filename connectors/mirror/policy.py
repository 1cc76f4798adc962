"""Replication policies: how a mirrored topic is named, and how to tell where a topic came from.

MirrorMaker 2's ``ReplicationPolicy`` decides the remote name of a topic (``orders`` from
cluster ``us-west`` becomes ``us-west.orders`` under ``DefaultReplicationPolicy``) and, the
other way, the source cluster and upstream name of a remote topic. The second half is what
prevents cycles: a topic whose source (at any hop) is the target cluster is never mirrored back.
``IdentityReplicationPolicy`` keeps names, so it cannot see where a topic came from (except
heartbeats); a bidirectional pair under it would loop, as in Kafka.

Name splitting follows Java's ``String.split`` (trailing empty parts dropped), so a topic like
``a.`` is not remote while ``.a`` has the source ``""``, exactly as MirrorMaker 2 decides.
Internal topic names (offset syncs, checkpoints) use ``.`` unless
``replication.policy.internal.topic.separator.enabled`` lets the custom separator in.
"""

from __future__ import annotations

HEARTBEATS_TOPIC = "heartbeats"

DEFAULT_POLICY = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"


def _java_split(text: str, separator: str) -> list[str]:
    """``text.split(Pattern.quote(separator))`` in Java: trailing empty strings removed."""
    parts = text.split(separator)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if parts == [""] and text:
        return []
    return parts


class DefaultReplicationPolicy:
    """Remote topics are ``<source alias><separator><topic>``."""

    def __init__(self, separator: str = ".", internal_separator_enabled: bool = True) -> None:
        if not separator:
            raise ValueError("replication.policy.separator must not be empty")
        self.separator = separator
        self._internal = separator if internal_separator_enabled else "."

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        return f"{source_alias}{self.separator}{topic}"

    def topic_source(self, topic: str) -> str | None:
        """The alias of the cluster ``topic`` was mirrored from, or None for a local topic."""
        parts = _java_split(topic, self.separator)
        return parts[0] if len(parts) >= 2 else None

    def upstream_topic(self, topic: str) -> str | None:
        """The topic's name one hop upstream, or None for a local topic."""
        source = self.topic_source(topic)
        if source is None:
            return None
        return topic[len(source) + len(self.separator) :]

    def original_topic(self, topic: str) -> str:
        """The name at the first hop (``b.a.orders`` -> ``orders``)."""
        upstream = self.upstream_topic(topic)
        if upstream is None or upstream == topic:
            return topic
        return self.original_topic(upstream)

    def heartbeats_topic(self) -> str:
        return HEARTBEATS_TOPIC

    def offset_syncs_topic(self, alias: str) -> str:
        return f"mm2-offset-syncs{self._internal}{alias}{self._internal}internal"

    def checkpoints_topic(self, alias: str) -> str:
        return f"{alias}{self._internal}checkpoints{self._internal}internal"

    def is_heartbeats_topic(self, topic: str) -> bool:
        return self.original_topic(topic) == self.heartbeats_topic()

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(f"{self._internal}checkpoints{self._internal}internal")

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return topic.endswith(f"{self._internal}internal")

    def is_internal_topic(self, topic: str) -> bool:
        """Kafka's (``__x``, ``.x``), Connect's (``-internal``/``.internal``) and MM2's own."""
        return (
            self.is_mm2_internal_topic(topic)
            or topic.startswith(("__", "."))
            or topic.endswith(("-internal", ".internal"))
        )


class IdentityReplicationPolicy(DefaultReplicationPolicy):
    """Remote topics keep their names; only heartbeats are renamed (so they stay traceable)."""

    def __init__(
        self,
        separator: str = ".",
        internal_separator_enabled: bool = True,
        source_alias: str | None = None,
    ) -> None:
        super().__init__(separator, internal_separator_enabled)
        self.source_alias = source_alias

    def _looks_like_heartbeat(self, topic: str) -> bool:
        return topic.endswith(self.heartbeats_topic())

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        if self._looks_like_heartbeat(topic):
            return super().format_remote_topic(source_alias, topic)
        return topic

    def topic_source(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().topic_source(topic)
        return self.source_alias

    def upstream_topic(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().upstream_topic(topic)
        return topic


POLICY_CLASSES: dict[str, type[DefaultReplicationPolicy]] = {
    DEFAULT_POLICY: DefaultReplicationPolicy,
    "DefaultReplicationPolicy": DefaultReplicationPolicy,
    IDENTITY_POLICY: IdentityReplicationPolicy,
    "IdentityReplicationPolicy": IdentityReplicationPolicy,
}


def make_policy(
    class_name: str, separator: str, internal_separator_enabled: bool, source_alias: str
) -> DefaultReplicationPolicy:
    """The policy named by ``replication.policy.class`` (KeyError for any other class)."""
    cls = POLICY_CLASSES[class_name]
    if cls is IdentityReplicationPolicy:
        return IdentityReplicationPolicy(separator, internal_separator_enabled, source_alias)
    return cls(separator, internal_separator_enabled)
