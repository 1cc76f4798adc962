"""Hand-built record batches (magic v2) and a raw Produce, for the native read path's tests.

Batches are encoded by kafka-python's record builder (an implementation independent of ours),
then patched where the builder has no switch: base offset, LogAppendTime with a broker-set
``maxTimestamp``, and the control bit (transaction markers). The CRC is recomputed after
patching so the broker accepts them.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from crc32c import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder
from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer

from tests.fixtures.broker import _recv_exact

Rec = tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes | None]]]

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def batch(
    base_offset: int,
    records: Sequence[Rec],
    *,
    codec: int = 0,
    first_timestamp: int = 1_700_000_000_000,
    log_append_time: int | None = None,
    control: bool = False,
    offset_deltas: Sequence[int] | None = None,
    producer_id: int = -1,
) -> bytes:
    """One batch holding ``records`` (key, value, headers); timestamps 1 ms apart.

    ``offset_deltas`` gives records explicit offset deltas (holes, as compaction leaves them);
    ``log_append_time`` marks the batch LogAppendTime with that ``maxTimestamp``.
    """
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=control,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    deltas = list(offset_deltas) if offset_deltas is not None else list(range(len(records)))
    for delta, (key, value, headers) in zip(deltas, records, strict=True):
        builder.append(
            delta, timestamp=first_timestamp + delta, key=key, value=value, headers=list(headers)
        )
    raw = bytearray(builder.build())
    struct.pack_into(">q", raw, 0, base_offset)
    attrs = struct.unpack_from(">h", raw, 21)[0]
    if log_append_time is not None:
        attrs |= 0x08
        struct.pack_into(">q", raw, 35, log_append_time)
    if control:
        attrs |= 0x20
    struct.pack_into(">h", raw, 21, attrs)
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    return bytes(raw)


def commit_marker(base_offset: int, producer_id: int) -> bytes:
    """A transaction COMMIT marker: a control batch whose one record has key (version 0,
    type 1) and value (version 0, coordinator epoch 0)."""
    return batch(
        base_offset,
        [(struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 0), ())],
        control=True,
        producer_id=producer_id,
    )


def produce_raw(bootstrap: str, topic: str, partition: int, data: bytes) -> None:
    """Sends ``data`` (whole batches) in one Produce v8 request, acks=1; fails on an error."""
    request_cls = load_request_schema(0, 8)
    response_cls = load_response_schema(0, 8)
    mod = _module(request_cls)
    request = request_cls(
        transactional_id=None,
        acks=1,
        timeout=timedelta(seconds=10),
        topic_data=(
            mod.TopicProduceData(
                name=topic,
                partition_data=(mod.PartitionProduceData(index=partition, records=data),),
            ),
        ),
    )
    parts: list[bytes] = []

    class _W:
        def write(self, b: bytes) -> None:
            parts.append(bytes(b))

    entity_writer(request_cls.__header_schema__)(
        _W(),
        request_cls.__header_schema__(
            request_api_key=0, request_api_version=8, correlation_id=1, client_id="test"
        ),
    )
    entity_writer(request_cls)(_W(), request)
    payload = b"".join(parts)
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", _recv_exact(sock, 4))[0]
        frame = _recv_exact(sock, size)
    _header, at = entity_reader(response_cls.__header_schema__)(frame, 0)
    response, _ = entity_reader(response_cls)(frame, at)
    (topic_resp,) = response.responses
    (part,) = topic_resp.partition_responses
    assert part.error_code == ErrorCode.none, part


def _module(cls: type) -> Any:
    import sys

    return sys.modules[cls.__module__]
