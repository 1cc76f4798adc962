"""The ACL matrix with real users: SASL/PLAIN principals on a SASL_PLAINTEXT listener.

``User:admin`` is a super user (it manages the ACLs, as the hub's principal would); ``alice``
may write and read ``orders``, ``bob`` may only read it with his group, and nobody else may do
anything (``allow.everyone.if.no.acl.found`` is false, Kafka's default). Each cell is a real
confluent-kafka client authenticating as that user.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from tests.fixtures.broker import BrokerProcess, wait_until

TIMEOUT = 20.0
USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret", "eve": "eve-pw"}
TOPIC = "orders"


class SaslBroker(BrokerProcess):
    """A broker with a PLAINTEXT and a SASL_PLAINTEXT (PLAIN) listener and the authorizer on."""

    def __init__(self, data_dir: Path) -> None:
        users = " ".join(f'user_{u}="{p}"' for u, p in USERS.items())
        jaas = f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};"
        config = data_dir.parent / "acl.properties"
        config.write_text("\n".join([
            "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "sasl.enabled.mechanisms=PLAIN",
            f"listener.name.sasl_plaintext.plain.sasl.jaas.config={jaas}",
            "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users=User:admin",
        ]) + "\n")  # fmt: skip
        super().__init__(data_dir, "--config", str(config))

    def settings(self, user: str) -> dict[str, str]:
        match = re.search(r"SASL_PLAINTEXT://127\.0\.0\.1:(\d+)", self.log(since_start=True))
        assert match, "no SASL_PLAINTEXT listener in the log"
        return {"bootstrap.servers": f"127.0.0.1:{match.group(1)}",
                "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                "sasl.username": user, "sasl.password": USERS[user]}  # fmt: skip


@pytest.fixture
def sasl_broker(tmp_path: Path) -> Iterator[SaslBroker]:
    proc = SaslBroker(tmp_path / "data")
    proc.start()
    yield proc
    proc.stop()
    assert "handler failed" not in proc.log(), proc.log()[-4000:]


def _produce(settings: dict[str, str]) -> int:
    """Produces one record; the delivery error code (0 when delivered)."""
    producer = Producer({**settings, "message.timeout.ms": 5000})
    outcome: list[KafkaError | None] = []
    producer.produce(TOPIC, b"v", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(TIMEOUT)
    assert outcome, "no delivery report"
    return 0 if outcome[0] is None else outcome[0].code()


def _consume(settings: dict[str, str], group: str) -> int:
    """Joins ``group`` and reads ``orders``; 0 once a record arrives, else the error code."""
    consumer = Consumer({**settings, "group.id": group, "auto.offset.reset": "earliest",
                         "session.timeout.ms": 6000})  # fmt: skip
    consumer.subscribe([TOPIC])
    try:
        msg = wait_until(lambda: consumer.poll(0.2), TIMEOUT, f"{group}'s first message")
        err = msg.error()  # type: ignore[attr-defined]
        return 0 if err is None else err.code()  # type: ignore[no-any-return]
    finally:
        consumer.close()


def test_each_user_gets_what_the_acls_grant(sasl_broker: SaslBroker) -> None:
    admin = AdminClient(sasl_broker.settings("admin"))
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(TIMEOUT)

    def allow(user: str, rtype: ResourceType, name: str, op: AclOperation) -> AclBinding:
        return AclBinding(rtype, name, ResourcePatternType.LITERAL, f"User:{user}", "*", op,
                          AclPermissionType.ALLOW)  # fmt: skip

    grants = [
        allow("alice", ResourceType.TOPIC, TOPIC, AclOperation.WRITE),
        allow("alice", ResourceType.TOPIC, TOPIC, AclOperation.READ),
        allow("bob", ResourceType.TOPIC, TOPIC, AclOperation.READ),
        allow("bob", ResourceType.GROUP, "bob-group", AclOperation.READ),
    ]
    for future in admin.create_acls(grants).values():
        future.result(TIMEOUT)

    assert _produce(sasl_broker.settings("alice")) == 0
    assert _produce(sasl_broker.settings("bob")) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _produce(sasl_broker.settings("eve")) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _consume(sasl_broker.settings("bob"), "bob-group") == 0
    # alice may read the topic but has no ACL on any group
    assert _consume(sasl_broker.settings("alice"), "alice-group") == (
        KafkaError.GROUP_AUTHORIZATION_FAILED
    )
    # bob is not an ACL admin: CreateAcls needs ALTER on the cluster.
    bob_admin = AdminClient(sasl_broker.settings("bob"))
    refused = bob_admin.create_acls([allow("bob", ResourceType.TOPIC, TOPIC, AclOperation.WRITE)])
    with pytest.raises(Exception) as why:
        next(iter(refused.values())).result(TIMEOUT)
    assert why.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    # eve sees no topic in Metadata (DESCRIBE filters the list)
    eve_topics = AdminClient(sasl_broker.settings("eve")).list_topics(timeout=TIMEOUT).topics
    assert TOPIC not in eve_topics
    assert TOPIC in admin.list_topics(timeout=TIMEOUT).topics
