"""In-process unit tests of the protocol's building blocks (no sockets)."""

from __future__ import annotations

import asyncio
import io
from datetime import timedelta
from pathlib import Path

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12 import response as f12
from kio.serial import entity_writer

from broker.config import BrokerConfig
from broker.producer_ids import BLOCK_SIZE, ProducerIdAllocator
from broker.protocol import registry
from broker.protocol._buffer import RecordChunks, ResponseBuffer
from broker.protocol._entities import build, has_field, nested
from broker.protocol._validate import null_in_required_field
from broker.protocol.notifier import AppendNotifier


def _fetch_response(records: object) -> f12.FetchResponse:
    part = f12.PartitionData(
        partition_index=0, error_code=ErrorCode.none, high_watermark=3,
        aborted_transactions=(), records=records,  # type: ignore[arg-type]
    )  # fmt: skip
    return f12.FetchResponse(
        throttle_time=timedelta(0), error_code=ErrorCode.none,
        responses=(f12.FetchableTopicResponse(topic="t", partitions=(part,)),),
    )  # fmt: skip


def test_record_chunks_encode_like_one_bytes_value():
    chunks = [b"a" * 10, memoryview(b"b" * 5000), b"c" * 3]
    expected = io.BytesIO()
    entity_writer(f12.FetchResponse)(expected, _fetch_response(b"".join(bytes(c) for c in chunks)))

    buf = ResponseBuffer()
    entity_writer(f12.FetchResponse)(buf, _fetch_response(RecordChunks(chunks)))
    parts = buf.chunks()
    payload = b"".join(bytes(p) for p in parts)
    assert payload[4:] == expected.getvalue()
    assert int.from_bytes(payload[:4], "big") == len(expected.getvalue())
    assert any(p is chunks[1] for p in parts), "the big chunk is passed through, not copied"


def test_notifier_wakes_waiters_and_cleans_up():
    async def scenario() -> None:
        notifier = AppendNotifier()
        waiting = asyncio.ensure_future(notifier.wait([("t", 0), ("t", 1)], timeout=5))
        await asyncio.sleep(0)  # let it register
        notifier.notify("t", 1)
        assert await asyncio.wait_for(waiting, 1) is True
        assert await notifier.wait([("t", 0)], timeout=0.01) is False
        assert notifier._consumers == {} and notifier._replicas == {}

    asyncio.run(scenario())


def test_notifier_wakes_followers_on_log_end_and_consumers_on_high_watermark():
    """A leader append that leaves the HW alone must not wake consumers (nothing new for
    them), and the HW moving must not wake followers (they already read to the log end)."""

    async def scenario() -> None:
        notifier = AppendNotifier()
        consumer = asyncio.ensure_future(notifier.wait([("t", 0)], timeout=5))
        follower = asyncio.ensure_future(notifier.wait([("t", 0)], timeout=5, replica=True))
        await asyncio.sleep(0)
        notifier.notify_log_end("t", 0)
        assert await asyncio.wait_for(follower, 1) is True
        assert not consumer.done()
        follower = asyncio.ensure_future(notifier.wait([("t", 0)], timeout=5, replica=True))
        await asyncio.sleep(0)
        notifier.notify_high_watermark("t", 0)
        assert await asyncio.wait_for(consumer, 1) is True
        assert not follower.done()
        consumer = asyncio.ensure_future(notifier.wait([("t", 0)], timeout=5))
        await asyncio.sleep(0)
        notifier.notify("t", 0)  # leadership changes and single-node appends wake both
        assert await asyncio.wait_for(asyncio.gather(consumer, follower), 1) == [True, True]
        assert notifier._consumers == {} and notifier._replicas == {}

    asyncio.run(scenario())


def test_registering_an_api_twice_is_refused():
    import broker.protocol.handlers  # noqa: F401 - registers ApiVersions (18)

    async def handler(ctx: registry.RequestContext, request: object) -> None:
        return None

    with pytest.raises(RuntimeError, match="already handled"):
        registry.handles(18, 0, 1)(handler)
    with pytest.raises(ValueError):
        registry.handles(9999, 2, 1)


def test_build_drops_fields_the_version_lacks():
    from kio.schema.produce.v3.response import PartitionProduceResponse as V3

    part = build(V3, index=0, error_code=ErrorCode.none, base_offset=5, log_append_time=None,
                 log_start_offset=0, record_errors=())  # fmt: skip
    assert part.base_offset == 5
    assert not has_field(V3, "log_start_offset")
    assert nested(f12.FetchResponse, "PartitionData") is f12.PartitionData


def test_null_required_array_is_found():
    response = _fetch_response(b"")
    assert null_in_required_field(response) is None
    broken = f12.FetchResponse(throttle_time=timedelta(0), error_code=ErrorCode.none,
                               responses=None)  # type: ignore[arg-type]  # fmt: skip
    assert null_in_required_field(broken) == "responses"


def test_producer_ids_are_reserved_on_disk_before_use(tmp_path: Path):
    first = ProducerIdAllocator(tmp_path)
    ids = [first.allocate() for _ in range(3)]
    assert ids == [0, 1, 2]
    assert (tmp_path / "producer_ids").read_text().strip() == str(BLOCK_SIZE)
    # a crash now loses the rest of the block but never reuses an id
    second = ProducerIdAllocator(tmp_path)
    assert second.allocate() == BLOCK_SIZE


def test_advertised_address_never_names_a_wildcard():
    assert BrokerConfig(host="0.0.0.0", port=9000).advertised_address == ("localhost", 9000)
    cfg = BrokerConfig(host="0.0.0.0", advertised_host="kafka.local", advertised_port=19092)
    assert cfg.advertised_address == ("kafka.local", 19092)
