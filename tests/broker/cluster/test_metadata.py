"""Membership and metadata: every live broker, leaders, replicas and ISR, as clients see them."""

from __future__ import annotations

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.broker.cluster.cluster import Cluster


def test_metadata_shows_every_broker_and_replicated_partitions(
    shared_cluster: Cluster, topic_name: str
) -> None:
    c = shared_cluster
    c.create_topic(topic_name, partitions=3, rf=3)
    admin = c.admin()
    md = admin.list_topics(topic_name, timeout=10)
    assert sorted(md.brokers) == [1, 2, 3]
    assert md.controller_id in (1, 2, 3)
    parts = md.topics[topic_name].partitions
    assert sorted(parts) == [0, 1, 2]
    for p, meta in parts.items():
        assert sorted(meta.replicas) == [1, 2, 3]
        assert meta.leader == c.leader(topic_name, p)
        c.wait(lambda p=p: len(c.isr(topic_name, p)) == 3, f"full ISR of partition {p}")
    # leadership is spread (Kafka's placement starts each partition at a different broker)
    assert len({parts[p].leader for p in parts}) == 3
    described = admin.describe_cluster(request_timeout=10).result(10)
    assert sorted(n.id for n in described.nodes) == [1, 2, 3]


def test_acks_all_produce_replicates_to_every_replica(
    shared_cluster: Cluster, topic_name: str
) -> None:
    c = shared_cluster
    c.create_topic(topic_name, partitions=1, rf=3)
    producer = Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "linger.ms": 5})
    errors: list[object] = []
    for i in range(500):
        producer.produce(topic_name, key=str(i), value=f"v{i}",
                         on_delivery=lambda err, msg: err and errors.append(err))  # fmt: skip
    assert producer.flush(30) == 0
    assert errors == []
    consumer = Consumer({"bootstrap.servers": c.bootstrap, "group.id": "unused",
                         "enable.auto.commit": False})  # fmt: skip
    consumer.assign([TopicPartition(topic_name, 0, 0)])
    got = []
    while len(got) < 500:
        msg = consumer.poll(10)
        assert msg is not None, f"stalled after {len(got)} records"
        assert msg.error() is None, msg.error()
        got.append(msg.value().decode())
    consumer.close()
    assert got == [f"v{i}" for i in range(500)]
    # every replica holds the same log: each broker's copy has the 500 records
    leader = c.leader(topic_name, 0)
    for b in c.brokers.values():
        c.wait(
            lambda b=b: _log_size(b, topic_name) == _log_size(c.brokers[leader], topic_name),
            f"broker {b.broker_id} to catch up",
        )


def _log_size(broker: object, topic: str) -> int:
    d = broker.data_dir / f"{topic}-0"  # type: ignore[attr-defined]
    return sum(f.stat().st_size for f in d.glob("*.log"))


def test_topic_admin_is_cluster_wide(shared_cluster: Cluster, topic_name: str) -> None:
    import json

    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions

    c = shared_cluster
    c.create_topic(topic_name, partitions=1, rf=2)
    admin = c.admin()
    entry = ConfigEntry("retention.ms", "12345", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource("topic", topic_name, incremental_configs=[entry])
    admin.incremental_alter_configs([resource])[resource].result(30)

    def overrides(b: object) -> dict[str, str]:
        doc = json.loads((b.data_dir / "topics.json").read_text())  # type: ignore[attr-defined]
        return doc["topics"].get(topic_name, {}).get("configs", {})

    for b in c.brokers.values():
        c.wait(lambda b=b: overrides(b).get("retention.ms") == "12345", "config on every broker")
    admin.create_partitions([NewPartitions(topic_name, 3)])[topic_name].result(30)
    c.wait(lambda: len(admin.list_topics(topic_name).topics[topic_name].partitions) == 3, "3 parts")
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewTopic

    too_many = admin.create_topics([NewTopic(f"{topic_name}-rf4", 1, 4)])[f"{topic_name}-rf4"]
    try:
        too_many.result(30)
        raise AssertionError("RF 4 on 3 brokers was accepted")
    except KafkaException as exc:
        assert exc.args[0].code() == KafkaError.INVALID_REPLICATION_FACTOR
    admin.delete_topics([topic_name], operation_timeout=20)[topic_name].result(30)
    for b in c.brokers.values():
        c.wait(lambda b=b: not (b.data_dir / f"{topic_name}-0").exists(), "local logs deleted")
