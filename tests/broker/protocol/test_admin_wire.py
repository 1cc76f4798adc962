"""Admin and offset APIs over the wire, for the cases real clients' helpers don't reach."""

from __future__ import annotations

from datetime import timedelta

from kio.schema.alter_configs.v2 import request as ac
from kio.schema.create_topics.v7 import request as ct
from kio.schema.delete_records.v2 import request as dr
from kio.schema.describe_configs.v4 import request as dc
from kio.schema.errors import ErrorCode
from kio.schema.init_producer_id.v5.request import InitProducerIdRequest
from kio.schema.list_offsets.v8 import request as lo
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData

from broker.log.records import Record, build_batch
from tests.broker.protocol.wire import WireClient

TOPIC, BROKER = 2, 4


def _create(client: WireClient, name: str, partitions: int = 1, configs=()) -> ct.CreatableTopic:
    request = ct.CreateTopicsRequest(
        topics=(ct.CreatableTopic(
            name=name, num_partitions=partitions, replication_factor=1, assignments=(),
            configs=tuple(ct.CreatableTopicConfig(name=k, value=v) for k, v in configs),
        ),),
        timeout=timedelta(seconds=5), validate_only=False,
    )  # fmt: skip
    return client.call(request).topics[0]


def _describe(client: WireClient, resource_type: int, name: str) -> dict[str, object]:
    request = dc.DescribeConfigsRequest(
        resources=(dc.DescribeConfigsResource(
            resource_type=resource_type, resource_name=name, configuration_keys=None
        ),),
        include_synonyms=True, include_documentation=True,
    )  # fmt: skip
    result = client.call(request).results[0]
    assert result.error_code == ErrorCode.none, result.error_message
    return {c.name: c for c in result.configs}


def test_create_topics_limits_and_returned_configs(broker, topic_name):
    with WireClient(broker.host, broker.port) as client:
        created = _create(client, topic_name, 2, [("retention.ms", "1000")])
        assert created.error_code == ErrorCode.none
        assert (created.num_partitions, created.replication_factor) == (2, 1)
        returned = {c.name: c for c in created.configs}
        assert returned["retention.ms"].value == "1000"
        assert returned["retention.ms"].config_source == 1  # DYNAMIC_TOPIC_CONFIG
        assert returned["cleanup.policy"].config_source == 5  # DEFAULT_CONFIG

        assert _create(client, topic_name).error_code == ErrorCode.topic_already_exists
        too_many = _create(client, topic_name + "-big", 10**6)
        assert too_many.error_code == ErrorCode.invalid_partitions
        bad_config = _create(client, topic_name + "-bad", 1, [("retention.ms", "x")])
        assert bad_config.error_code == ErrorCode.invalid_config
        assert "retention.ms" in bad_config.error_message
        bad_name = _create(client, "bad/name", 1)
        assert bad_name.error_code == ErrorCode.invalid_topic_exception


def test_legacy_alter_configs_replaces_the_override_set(broker, topic_name):
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name, 1, [("retention.ms", "1000"), ("segment.ms", "2000")])
        request = ac.AlterConfigsRequest(
            resources=(ac.AlterConfigsResource(
                resource_type=TOPIC, resource_name=topic_name,
                configs=(ac.AlterableConfig(name="segment.ms", value="3000"),),
            ),),
            validate_only=False,
        )  # fmt: skip
        assert client.call(request).responses[0].error_code == ErrorCode.none
        configs = _describe(client, TOPIC, topic_name)
        assert configs["segment.ms"].value == "3000"
        assert configs["retention.ms"].value == "604800000"
        assert configs["retention.ms"].config_source == 5
        synonyms = [(s.name, s.source) for s in configs["segment.ms"].synonyms]
        assert synonyms == [("segment.ms", 1), ("log.roll.ms", 5)]
        assert configs["segment.ms"].documentation


def test_broker_configs_describe_but_do_not_alter(broker):
    with WireClient(broker.host, broker.port) as client:
        configs = _describe(client, BROKER, "1")
        assert configs["auto.create.topics.enable"].value == "true"
        assert configs["advertised.listeners"].value == f"PLAINTEXT://{broker.bootstrap}"
        assert configs["log.retention.ms"].value == "604800000"
        request = ac.AlterConfigsRequest(
            resources=(ac.AlterConfigsResource(
                resource_type=BROKER, resource_name="1",
                configs=(ac.AlterableConfig(name="num.partitions", value="3"),),
            ),),
            validate_only=False,
        )  # fmt: skip
        assert client.call(request).responses[0].error_code == ErrorCode.invalid_config


def test_transactional_init_producer_id_bumps_the_epoch(broker, topic_name):
    def init(timeout_s: float) -> object:
        request = InitProducerIdRequest(
            transactional_id=topic_name,
            transaction_timeout=timedelta(seconds=timeout_s),
            producer_id=-1,
            producer_epoch=-1,
        )
        with WireClient(broker.host, broker.port) as client:
            return client.call(request)

    first, second = init(60), init(60)
    assert first.error_code == second.error_code == ErrorCode.none
    assert second.producer_id == first.producer_id
    assert second.producer_epoch == first.producer_epoch + 1  # the first instance is fenced
    assert init(3600).error_code == ErrorCode.invalid_transaction_timeout  # > 15 min


def _list_offset(client: WireClient, topic: str, timestamp: int) -> tuple[int, int]:
    request = lo.ListOffsetsRequest(
        replica_id=-1, isolation_level=0,
        topics=(lo.ListOffsetsTopic(name=topic, partitions=(
            lo.ListOffsetsPartition(partition_index=0, timestamp=timestamp),
        )),),
    )  # fmt: skip
    part = client.call(request).topics[0].partitions[0]
    assert part.error_code == ErrorCode.none
    return part.offset, part.timestamp


def test_delete_records_and_list_offsets(broker, topic_name):
    base = 1_700_000_000_000
    with WireClient(broker.host, broker.port) as client:
        _create(client, topic_name)
        stamps = [base + 30, base + 10, base + 50, base + 20]  # max timestamp at offset 2
        records = b"".join(build_batch([Record(0, ts, None, b"v")]) for ts in stamps)
        client.call(
            ProduceRequest(
                transactional_id=None, acks=-1, timeout=timedelta(seconds=5),
                topic_data=(TopicProduceData(name=topic_name, partition_data=(
                    PartitionProduceData(index=0, records=records),)),),
            )
        )  # fmt: skip
        assert _list_offset(client, topic_name, -1)[0] == 4
        assert _list_offset(client, topic_name, -2)[0] == 0
        assert _list_offset(client, topic_name, -3) == (2, base + 50)
        assert _list_offset(client, topic_name, base + 40) == (2, base + 50)
        assert _list_offset(client, topic_name, base + 60) == (-1, -1)

        request = dr.DeleteRecordsRequest(
            topics=(dr.DeleteRecordsTopic(name=topic_name, partitions=(
                dr.DeleteRecordsPartition(partition_index=0, offset=3),)),),
            timeout=timedelta(seconds=5),
        )  # fmt: skip
        part = client.call(request).topics[0].partitions[0]
        assert (part.error_code, part.low_watermark) == (ErrorCode.none, 3)
        assert _list_offset(client, topic_name, -2)[0] == 3
