"""Which source topic ACLs the source connector copies to the target, and how they change.

Pure decisions (the connector does the admin calls), following Kafka's MirrorSourceConnector
(``sync.topic.acls.enabled``):

- only TOPIC ACLs with a LITERAL pattern naming a topic the connector replicates (the topic
  filter, not internal, not a cycle; see ``TopicSelector.replicates``) are copied: a prefixed
  pattern cannot be renamed through the replication policy. The wildcard ``*`` (a LITERAL
  name meaning every topic) is left out too: renamed to ``<alias>.*`` it would name no topic
  (Kafka copies it that way);
- ALLOW WRITE is left out: only the mirror writes to a remote topic, a client that could write
  there would fork it from its source;
- ALLOW ALL becomes ALLOW READ (for the same reason); everything else, DENY included, is
  copied as it is (same principal, host, operation and permission);
- the topic name goes through the replication policy (``<alias>.<topic>`` by default).

ACLs are only ever added: one removed on the source stays on the target (Kafka does the same).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from connectors.mirror.topic_sync import TopicSelector

WILDCARD = "*"


def should_replicate_acl(binding: AclBinding) -> bool:
    """False for ALLOW WRITE (Kafka's ``shouldReplicateAcl``)."""
    b: Any = binding  # its stubs type the fields as "enum | str | int"; set, they are enums
    return not (b.permission_type == AclPermissionType.ALLOW and b.operation == AclOperation.WRITE)


def target_acl(binding: AclBinding, selector: TopicSelector) -> AclBinding:
    """The remote topic's ACL for a source topic ACL (ALLOW ALL narrowed to ALLOW READ)."""
    b: Any = binding
    operation = b.operation
    if b.permission_type == AclPermissionType.ALLOW and operation == AclOperation.ALL:
        operation = AclOperation.READ
    return AclBinding(
        ResourceType.TOPIC, selector.remote(b.name), ResourcePatternType.LITERAL,
        b.principal, b.host, operation, b.permission_type,
    )  # fmt: skip


def mirrored_acls(source: Iterable[AclBinding], selector: TopicSelector) -> list[AclBinding]:
    """The ACLs to create on the target for the source cluster's topic ACLs, without
    duplicates (ALLOW ALL and ALLOW READ on one topic give one ALLOW READ), in a stable order."""
    out: dict[tuple[Any, ...], AclBinding] = {}
    for binding in source:
        b: Any = binding
        if (
            b.restype != ResourceType.TOPIC
            or b.resource_pattern_type != ResourcePatternType.LITERAL
            or b.name == WILDCARD
            or not should_replicate_acl(binding)
            or not selector.replicates(b.name)
        ):
            continue
        mirrored: Any = target_acl(binding, selector)
        key = (mirrored.name, mirrored.principal, mirrored.host, mirrored.operation.value,
               mirrored.permission_type.value)  # fmt: skip
        out.setdefault(key, mirrored)
    return [out[k] for k in sorted(out)]
