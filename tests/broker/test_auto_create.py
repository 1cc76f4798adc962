"""Topic auto-creation is a broker setting (on by default, like Kafka)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

from tests.broker.protocol.wire import WireClient
from tests.fixtures.broker import BrokerProcess


def _metadata(proc: BrokerProcess, topic: str, allow: bool = True):
    with WireClient(proc.host, proc.port) as client:
        return client.call(
            MetadataRequest(
                topics=(MetadataRequestTopic(topic_id=None, name=topic),),
                allow_auto_topic_creation=allow,
                include_topic_authorized_operations=False,
            )
        ).topics[0]


@pytest.fixture
def no_auto_create(tmp_path: Path) -> Iterator[BrokerProcess]:
    proc = BrokerProcess(tmp_path / "data", "--no-auto-create-topics", "--num-partitions", "3")
    proc.start()
    yield proc
    proc.stop()


def test_metadata_creates_unknown_topics_with_the_default_partition_count(broker, topic_name):
    created = _metadata(broker, topic_name)
    assert created.error_code == ErrorCode.none
    assert len(created.partitions) == 1
    assert _metadata(broker, topic_name + "-no", allow=False).error_code == (
        ErrorCode.unknown_topic_or_partition
    )


def test_auto_create_can_be_switched_off(no_auto_create, topic_name):
    missing = _metadata(no_auto_create, topic_name)
    assert missing.error_code == ErrorCode.unknown_topic_or_partition
    assert missing.partitions == ()
