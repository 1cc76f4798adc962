"""Cluster mode: ACLs live in ZooKeeper (Kafka's /kafka-acl layout) and every broker enforces
an ACL created through any of them; replication keeps working under the authorizer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from kio.schema.describe_acls.v3.request import DescribeAclsRequest

from tests.broker.cluster.cluster import Cluster
from tests.broker.protocol.wire import WireClient
from tests.fixtures.broker import wait_until

TIMEOUT = 30.0
ME = "User:ANONYMOUS"  # clients and brokers alike on PLAINTEXT listeners


@pytest.fixture
def acl_cluster(tmp_path: Path, zk_chroot: str) -> Iterator[Cluster]:
    c = Cluster(
        tmp_path, zk_chroot, 2,
        "-o", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
        "-o", "allow.everyone.if.no.acl.found=true",
    )  # fmt: skip
    try:
        c.start()
        yield c
    finally:
        c.stop()


def _acl(rtype: ResourceType, name: str, op: AclOperation, allow: bool = True) -> AclBinding:
    perm = AclPermissionType.ALLOW if allow else AclPermissionType.DENY
    return AclBinding(rtype, name, ResourcePatternType.LITERAL, ME, "*", op, perm)


def _produce(bootstrap: str, topic: str) -> int:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                         "message.timeout.ms": 10000})  # fmt: skip
    outcome: list[KafkaError | None] = []
    producer.produce(topic, b"v", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(TIMEOUT)
    assert outcome, "no delivery report"
    return 0 if outcome[0] is None else outcome[0].code()


def test_an_acl_made_on_one_broker_is_enforced_by_all(acl_cluster: Cluster) -> None:
    one, two = acl_cluster.brokers[1], acl_cluster.brokers[2]
    admin = AdminClient({"bootstrap.servers": one.bootstrap})
    cluster = ResourceType.BROKER
    grants = [_acl(cluster, "kafka-cluster", op) for op in (
        AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CREATE,
        AclOperation.CLUSTER_ACTION,  # the brokers' own follower fetches and markers
    )]  # fmt: skip
    for future in admin.create_acls(grants).values():
        future.result(TIMEOUT)
    acl_cluster.create_topic("open", rf=2)
    acl_cluster.create_topic("locked", rf=2)
    acl_cluster.create_topic("hidden", rf=2)
    assert _produce(acl_cluster.bootstrap, "open") == 0  # acks=all: followers may fetch

    denials = [_acl(ResourceType.TOPIC, "locked", AclOperation.WRITE, allow=False),
               _acl(ResourceType.TOPIC, "hidden", AclOperation.ALL, allow=False)]  # fmt: skip
    for future in admin.create_acls(denials).values():
        future.result(TIMEOUT)
    request = DescribeAclsRequest(
        resource_type_filter=2, resource_name_filter="locked", pattern_type_filter=3,
        principal_filter=None, host_filter=None, operation=1, permission_type=1,
    )  # fmt: skip
    with WireClient(two.host, two.port) as client:  # the other broker learnt it by the watch
        wait_until(lambda: client.call(request).resources, TIMEOUT, "broker 2 to see the ACL")
    for b in (one, two):
        assert _produce(b.bootstrap, "locked") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _produce(acl_cluster.bootstrap, "open") == 0
    listed = AdminClient({"bootstrap.servers": two.bootstrap}).list_topics(timeout=TIMEOUT).topics
    # "locked" has an ACL now (a DENY) and no ALLOW: allow.everyone no longer applies to it,
    # so it is not DESCRIBE-able either (Kafka's rule); "open" still has no ACL at all.
    assert "open" in listed and "locked" not in listed and "hidden" not in listed

    raw, _ = acl_cluster._zk.get("/kafka-acl/Topic/locked")  # Kafka's own layout
    assert json.loads(raw)["acls"] == [
        {"principal": ME, "permissionType": "Deny", "operation": "Write", "host": "*"}
    ]


def test_a_quota_set_on_one_broker_reaches_the_others(acl_cluster: Cluster) -> None:
    from kio.schema.alter_client_quotas.v1.request import (
        AlterClientQuotasRequest,
        EntityData,
        EntryData,
        OpData,
    )
    from kio.schema.describe_client_quotas.v1.request import (
        ComponentData,
        DescribeClientQuotasRequest,
    )

    one, two = acl_cluster.brokers[1], acl_cluster.brokers[2]
    alter = AlterClientQuotasRequest(entries=(EntryData(
        entity=(EntityData(entity_type="user", entity_name="bob"),
                EntityData(entity_type="client-id", entity_name=None)),
        ops=(OpData(key="consumer_byte_rate", value=2048.0, remove=False),),
    ),), validate_only=False)  # fmt: skip
    with WireClient(one.host, one.port) as client:
        assert [e.error_code for e in client.call(alter).entries] == [0]
    describe = DescribeClientQuotasRequest(
        components=(ComponentData(entity_type="user", match_type=0, match="bob"),), strict=False
    )

    def seen() -> object:
        with WireClient(two.host, two.port) as client:
            return client.call(describe).entries

    entries = wait_until(seen, TIMEOUT, "broker 2 to see the quota")
    assert [(v.key, v.value) for v in entries[0].values] == [("consumer_byte_rate", 2048.0)]  # type: ignore[index]
    raw, _ = acl_cluster._zk.get("/config/users/bob/clients/<default>")  # Kafka's layout
    assert json.loads(raw)["config"] == {"consumer_byte_rate": "2048.0"}
