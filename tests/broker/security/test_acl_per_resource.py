"""Multi-resource APIs answer per resource under ACLs, as Kafka does: ``alice`` may use the topic
``mine``, the group ``g-mine`` and the transactional id ``tx-mine`` only, and a request naming
both hers and others' gets the authorization error for the others alone, while hers are served.
Admin APIs go through confluent-kafka; the APIs it lacks (DescribeProducers,
DescribeTransactions, AddPartitionsToTxn) through the broker's own kio client over SASL."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kio.schema.add_partitions_to_txn.v3 import request as add_req
from kio.schema.describe_producers.v0 import request as producers_req
from kio.schema.describe_transactions.v0 import request as txn_req
from kio.schema.errors import ErrorCode

from broker.cluster.peer_client import PeerConnection
from broker.security.inter_broker import PeerSecurity
from tests.broker.security.test_acl_matrix import USERS, SaslBroker

TIMEOUT = 20.0


@pytest.fixture
def acl_broker(tmp_path: Path) -> Iterator[SaslBroker]:
    proc = SaslBroker(tmp_path / "data")
    proc.start()
    admin = AdminClient(proc.settings("admin"))
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in ("mine", "theirs")]).values():
        future.result(TIMEOUT)
    grants = [
        (ResourceType.TOPIC, "mine"), (ResourceType.GROUP, "g-mine"),
        (ResourceType.TRANSACTIONAL_ID, "tx-mine"),
    ]  # fmt: skip
    bindings = [
        AclBinding(rtype, name, ResourcePatternType.LITERAL, "User:alice", "*",
                   AclOperation.ALL, AclPermissionType.ALLOW)
        for rtype, name in grants
    ]  # fmt: skip
    for future in admin.create_acls(bindings).values():
        future.result(TIMEOUT)
    yield proc
    proc.stop()
    assert "handler failed" not in proc.log(), proc.log()[-4000:]


def _code(future: Any) -> int:
    try:
        future.result(TIMEOUT)
    except KafkaException as exc:
        return int(exc.args[0].code())
    return 0


def test_admin_apis_answer_per_resource(acl_broker: SaslBroker) -> None:
    alice = AdminClient(acl_broker.settings("alice"))
    grown = alice.create_partitions([NewPartitions("mine", 2), NewPartitions("theirs", 2)])
    assert _code(grown["mine"]) == 0
    assert _code(grown["theirs"]) == KafkaError.TOPIC_AUTHORIZATION_FAILED

    deleted = alice.delete_records([TopicPartition("mine", 0, 0), TopicPartition("theirs", 0, 0)])
    codes = {tp.topic: _code(f) for tp, f in deleted.items()}
    assert codes == {"mine": 0, "theirs": KafkaError.TOPIC_AUTHORIZATION_FAILED}

    # OffsetCommit: READ on the group passes; the topic without READ fails alone
    consumer = Consumer({**acl_broker.settings("alice"), "group.id": "g-mine"})
    try:
        offsets = [TopicPartition("mine", 0, 0), TopicPartition("theirs", 0, 0)]
        try:
            results = consumer.commit(offsets=offsets, asynchronous=False) or []
            errors = {tp.topic: tp.error.code() if tp.error else 0 for tp in results}
        except KafkaException as exc:  # librdkafka raises when any partition failed
            errors = {"theirs": exc.args[0].code()}
        (stored,) = consumer.committed([TopicPartition("mine", 0)], timeout=TIMEOUT)
    finally:
        consumer.close()
    assert errors.get("theirs") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert stored.offset == 0 and stored.error is None  # "mine" was committed

    described = alice.describe_consumer_groups(["g-mine", "g-theirs"])
    assert _code(described["g-theirs"]) == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert _code(described["g-mine"]) != KafkaError.GROUP_AUTHORIZATION_FAILED

    dropped = alice.delete_consumer_groups(["g-mine", "g-theirs"])
    assert _code(dropped["g-theirs"]) == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert _code(dropped["g-mine"]) == 0


def test_transaction_apis_answer_per_resource(acl_broker: SaslBroker) -> None:
    match = re.search(r"SASL_PLAINTEXT://127\.0\.0\.1:(\d+)", acl_broker.log(since_start=True))
    assert match

    async def run() -> tuple[Any, Any, Any, Any]:
        security = PeerSecurity(None, "PLAIN", "alice", USERS["alice"])
        conn = PeerConnection("127.0.0.1", int(match.group(1)), "acl-test", security)
        await conn.connect(TIMEOUT)
        try:
            producers = await conn.request(61, 0, producers_req.DescribeProducersRequest(
                topics=tuple(producers_req.TopicRequest(name=t, partition_indexes=(0,))
                             for t in ("mine", "theirs")),
            ), TIMEOUT)  # fmt: skip
            txns = await conn.request(65, 0, txn_req.DescribeTransactionsRequest(
                transactional_ids=("tx-mine", "tx-theirs"),
            ), TIMEOUT)  # fmt: skip
            added = []
            for txn_id in ("tx-mine", "tx-theirs"):
                added.append(await conn.request(24, 3, add_req.AddPartitionsToTxnRequest(
                    v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=1,
                    v3_and_below_producer_epoch=0,
                    v3_and_below_topics=tuple(
                        add_req.AddPartitionsToTxnTopic(name=t, partitions=(0,))
                        for t in ("mine", "theirs")
                    ),
                ), TIMEOUT))  # fmt: skip
            return producers, txns, added[0], added[1]
        finally:
            conn.close()

    producers, txns, mine, theirs = asyncio.run(run())
    by_topic = {t.name: t.partitions[0].error_code for t in producers.topics}
    assert by_topic == {"mine": ErrorCode.none, "theirs": ErrorCode.topic_authorization_failed}
    states = {s.transactional_id: s.error_code for s in txns.transaction_states}
    assert states["tx-theirs"] == ErrorCode.transactional_id_authorization_failed
    assert states["tx-mine"] != ErrorCode.transactional_id_authorization_failed

    def codes(answer: Any) -> dict[str, ErrorCode]:
        return {t.name: t.results_by_partition[0].partition_error_code
                for t in answer.results_by_topic_v3_and_below}  # fmt: skip

    assert codes(mine) == {"mine": ErrorCode.operation_not_attempted,
                           "theirs": ErrorCode.topic_authorization_failed}  # fmt: skip
    assert set(codes(theirs).values()) == {ErrorCode.transactional_id_authorization_failed}
