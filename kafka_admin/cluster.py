"""The cluster's shape: brokers (id, address, rack, controller) and every partition's leader,
replicas and in-sync replicas, with the unhealthy ones flagged.

Brokers come from DescribeCluster (it carries racks, which Metadata through confluent-kafka
does not); partitions from Metadata. A partition is *under-replicated* when fewer replicas are
in sync than assigned, and *offline* when it has no leader (-1): the two numbers an operator
looks at first.
"""

from __future__ import annotations

from typing import Any

from kafka_admin.client import KafkaAdmin


def brokers(admin: KafkaAdmin) -> dict[str, Any]:
    """``{"cluster_id", "controller_id", "brokers": [{"id", "host", "port", "rack",
    "controller", "leaders", "replicas"}]}``; leader and replica counts over all partitions."""
    described = admin.admin.describe_cluster(request_timeout=admin.timeout).result(admin.timeout)
    controller = described.controller.id if described.controller is not None else None
    leaders: dict[int, int] = {}
    replicas: dict[int, int] = {}
    for row in partitions(admin):
        leaders[row["leader"]] = leaders.get(row["leader"], 0) + 1
        for r in row["replicas"]:
            replicas[r] = replicas.get(r, 0) + 1
    return {
        "cluster_id": described.cluster_id,
        "controller_id": controller,
        "brokers": [
            {
                "id": node.id, "host": node.host, "port": node.port, "rack": node.rack,
                "controller": node.id == controller,
                "leaders": leaders.get(node.id, 0), "replicas": replicas.get(node.id, 0),
            }
            for node in sorted(described.nodes, key=lambda n: n.id)
        ],
    }  # fmt: skip


def partitions(admin: KafkaAdmin, topic: str | None = None) -> list[dict[str, Any]]:
    """Every partition (of ``topic``, when given) with leader, replicas, ISR and health."""
    md = admin.metadata(topic)
    rows = []
    for name in sorted(md.topics):
        meta = md.topics[name]
        for p in sorted(meta.partitions):
            part = meta.partitions[p]
            rows.append({
                "topic": name, "partition": p, "internal": admin.is_internal(name),
                "leader": part.leader, "replicas": list(part.replicas), "isr": list(part.isrs),
                "under_replicated": len(part.isrs) < len(part.replicas),
                "offline": part.leader < 0,
            })  # fmt: skip
    return rows
