"""ACLs end to end: a real broker with ``authorizer.class.name`` set, driven by confluent-kafka.

Every client here is ``User:ANONYMOUS`` (a PLAINTEXT listener), so the matrix is written with
DENY ACLs and ACLs naming other principals, under ``allow.everyone.if.no.acl.found=true`` so
the first client can grant itself the cluster ALTER it needs to manage ACLs (Kafka's bootstrap
path without super users). The per-user matrix runs where SASL principals exist.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kio.schema.describe_acls.v3.request import DescribeAclsRequest
from kio.schema.errors import ErrorCode

from tests.broker.protocol.wire import WireClient
from tests.fixtures.broker import BrokerProcess, wait_until

TIMEOUT = 20.0
ME = "User:ANONYMOUS"
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED = ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED


_DESCRIBE_ALL = DescribeAclsRequest(
    resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
    principal_filter=None, host_filter=None, operation=1, permission_type=1,
)  # fmt: skip


@pytest.fixture
def acl_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    proc = BrokerProcess(
        tmp_path / "data",
        "--override", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
        "--override", "allow.everyone.if.no.acl.found=true",
    )  # fmt: skip
    proc.start()
    yield proc
    proc.stop()
    log = proc.log()
    assert "handler failed" not in log, log[-4000:]


def _binding(rtype, name, op, perm=ALLOW, pattern=LITERAL, who=ME) -> AclBinding:
    return AclBinding(rtype, name, pattern, who, "*", op, perm)


def _create_acls(admin: AdminClient, bindings: list[AclBinding]) -> None:
    for future in admin.create_acls(bindings).values():
        future.result(TIMEOUT)


def _produce(bootstrap: str, topic: str) -> KafkaError | None:
    """Produces one record; returns the delivery error (None when delivered)."""
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 5000})
    outcome: list[KafkaError | None] = []
    producer.produce(topic, b"v", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(TIMEOUT)
    assert outcome, "no delivery report"
    return outcome[0]


def _fetch_error(bootstrap: str, topic: str) -> KafkaError | None:
    """Reads partition 0 from the start; the first error, or None once a record arrived."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused",
                         "enable.auto.commit": False})  # fmt: skip
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        msg = wait_until(lambda: consumer.poll(0.2), TIMEOUT, "a fetch result")
        return msg.error()  # type: ignore[attr-defined, no-any-return]
    finally:
        consumer.close()


def test_acl_matrix_persists_and_is_enforced(acl_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": acl_broker.bootstrap})
    cluster = ResourceType.BROKER  # confluent-kafka's name for the CLUSTER resource
    # Nothing on the cluster yet: allow.everyone lets us grant ourselves ACL management.
    _create_acls(admin, [_binding(cluster, "kafka-cluster", AclOperation.ALTER),
                         _binding(cluster, "kafka-cluster", AclOperation.DESCRIBE)])  # fmt: skip
    open_t, secret_t, hidden_t = "open-t", "secret-t", "hidden-t"
    futures = admin.create_topics([NewTopic(t, 1, 1) for t in (open_t, secret_t, hidden_t)])
    for future in futures.values():
        future.result(TIMEOUT)  # topics have no ACLs: allow.everyone applies to CREATE on them
    assert _produce(acl_broker.bootstrap, secret_t) is None

    _create_acls(admin, [
        _binding(ResourceType.TOPIC, "*", AclOperation.ALL),
        _binding(ResourceType.GROUP, "*", AclOperation.ALL),
        _binding(ResourceType.TOPIC, secret_t, AclOperation.WRITE, DENY),
        _binding(ResourceType.TOPIC, secret_t, AclOperation.READ, DENY),
        _binding(ResourceType.TOPIC, "hidden-", AclOperation.ALL, DENY, PREFIXED),
        _binding(ResourceType.GROUP, "denied-", AclOperation.READ, DENY, PREFIXED),
    ])  # fmt: skip

    assert _produce(acl_broker.bootstrap, open_t) is None
    err = _produce(acl_broker.bootstrap, secret_t)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    err = _fetch_error(acl_broker.bootstrap, secret_t)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _fetch_error(acl_broker.bootstrap, open_t) is None

    listed = admin.list_topics(timeout=TIMEOUT).topics
    assert open_t in listed and secret_t in listed and hidden_t not in listed

    consumer = Consumer({"bootstrap.servers": acl_broker.bootstrap, "group.id": "denied-g",
                         "session.timeout.ms": 6000})  # fmt: skip
    consumer.subscribe([open_t])
    try:
        msg = wait_until(lambda: consumer.poll(0.2), TIMEOUT, "the group's answer")
        assert msg.error() is not None  # type: ignore[attr-defined]
        assert msg.error().code() == KafkaError.GROUP_AUTHORIZATION_FAILED  # type: ignore[attr-defined]
    finally:
        consumer.close()

    described = admin.describe_acls(
        AclBindingFilter(ResourceType.TOPIC, secret_t, ResourcePatternType.MATCH, None, None,
                         AclOperation.ANY, AclPermissionType.ANY)
    ).result(TIMEOUT)  # fmt: skip
    assert {(b.name, b.operation, b.permission_type) for b in described} == {
        (secret_t, AclOperation.WRITE, DENY), (secret_t, AclOperation.READ, DENY),
        ("*", AclOperation.ALL, ALLOW),  # MATCH finds the wildcard that applies too
    }  # fmt: skip

    # ACLs survive a restart (acls.json in the data dir).
    acl_broker.stop()
    acl_broker.start()
    admin = AdminClient({"bootstrap.servers": acl_broker.bootstrap})
    err = _produce(acl_broker.bootstrap, secret_t)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    deleted = admin.delete_acls([
        AclBindingFilter(ResourceType.TOPIC, secret_t, LITERAL, ME, None, AclOperation.WRITE,
                         DENY)
    ])  # fmt: skip
    assert len(next(iter(deleted.values())).result(TIMEOUT)) == 1
    assert _produce(acl_broker.bootstrap, secret_t) is None


def test_cluster_apis_need_their_cluster_acl(acl_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": acl_broker.bootstrap})
    cluster = ResourceType.BROKER
    _create_acls(admin, [
        _binding(cluster, "kafka-cluster", AclOperation.ALTER),
        _binding(cluster, "kafka-cluster", AclOperation.DESCRIBE, DENY),
    ])  # fmt: skip
    # librdkafka reports DescribeAcls' top-level error as an empty result, so read the wire.
    request = _DESCRIBE_ALL
    with WireClient(acl_broker.host, acl_broker.port) as client:
        refused = client.call(request)
        assert refused.error_code == ErrorCode.cluster_authorization_failed
        assert "not authorized" in refused.error_message
        # ALTER (granted) implies DESCRIBE, but the DENY wins; dropping it lets DESCRIBE in.
        admin.delete_acls([AclBindingFilter(cluster, "kafka-cluster", LITERAL, ME, None,
                                            AclOperation.DESCRIBE, DENY)])  # fmt: skip
        answer = wait_until(
            lambda: (r := client.call(request)).error_code == ErrorCode.none and r,
            TIMEOUT, "DescribeAcls to be allowed",
        )  # fmt: skip
        assert {r.resource_type for r in answer.resources} == {4}  # type: ignore[attr-defined]


def test_acl_apis_without_an_authorizer_say_security_disabled(broker: BrokerProcess) -> None:
    with WireClient(broker.host, broker.port) as client:
        answer = client.call(_DESCRIBE_ALL)
    assert answer.error_code == ErrorCode.security_disabled
