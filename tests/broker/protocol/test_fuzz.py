"""Throws random and mutated frames at the broker; it must keep serving everyone else.

Seeded and bounded: each run sends the same ``FRAMES`` frames for a given seed (printed on
failure), half mutations of valid requests (bit flips, truncation, garbage appended, lying
size prefixes), half random bytes. A witness connection opened before the storm must still
get answers during and after it, and the broker must log no handler crash: a frame that
decodes must be answered or refused, never blow up a handler.
"""

from __future__ import annotations

import io
import os
import random
import socket
import struct
from datetime import timedelta

from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v12.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.list_offsets.v7.request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic
from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.serial import entity_writer

from broker.log.records import Record, build_batch
from tests.broker.protocol.wire import WireClient

FRAMES = 400
SEED = int(os.environ.get("SLUICE_FUZZ_SEED", "20261122"))


def _valid_payloads(topic: str) -> list[bytes]:
    batch = build_batch([Record(0, 1_700_000_000_000, b"key", b"value" * 10)])
    requests = [
        ApiVersionsRequest(client_software_name="fuzz", client_software_version="1"),
        MetadataRequest(
            topics=(MetadataRequestTopic(topic_id=None, name=topic),),
            allow_auto_topic_creation=True,
            include_topic_authorized_operations=False,
        ),
        ProduceRequest(
            transactional_id=None, acks=1, timeout=timedelta(seconds=1),
            topic_data=(TopicProduceData(
                name=topic, partition_data=(PartitionProduceData(index=0, records=batch),)
            ),),
        ),
        FetchRequest(
            max_wait=timedelta(milliseconds=10), min_bytes=1, max_bytes=1 << 20,
            topics=(FetchTopic(topic=topic, partitions=(
                FetchPartition(fetch_offset=0, partition=0, partition_max_bytes=1 << 20),
            )),),
            forgotten_topics_data=(),
        ),
        ListOffsetsRequest(
            replica_id=-1, isolation_level=0,
            topics=(ListOffsetsTopic(name=topic, partitions=(
                ListOffsetsPartition(partition_index=0, timestamp=-1),
            )),),
        ),
    ]  # fmt: skip
    out = []
    for request in requests:
        header_cls = request.__header_schema__
        buf = io.BytesIO()
        entity_writer(header_cls)(
            buf,
            header_cls(
                request_api_key=request.__api_key__,
                request_api_version=request.__version__,
                correlation_id=7,
                client_id="fuzz",
            ),
        )
        entity_writer(type(request))(buf, request)
        out.append(buf.getvalue())
    return out


def _mutate(rng: random.Random, payload: bytes) -> bytes:
    data = bytearray(payload)
    kind = rng.randrange(5)
    if kind == 0:  # flip a few bytes
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 1:  # truncate
        del data[rng.randrange(1, len(data)) :]
    elif kind == 2:  # garbage appended
        data += rng.randbytes(rng.randint(1, 64))
    elif kind == 3:  # a length/count field somewhere set to something huge or negative
        pos = rng.randrange(max(1, len(data) - 4))
        data[pos : pos + 4] = struct.pack(">i", rng.choice([-1, -2, 2**31 - 1, 65535, 1 << 24]))
    else:  # keep the api key, random rest
        data[8:] = rng.randbytes(rng.randint(0, 80))
    return bytes(data)


def _frame(rng: random.Random, payload: bytes) -> bytes:
    size = len(payload)
    if rng.random() < 0.1:  # a size prefix that lies
        size = rng.choice([size + rng.randint(1, 100), max(0, size - rng.randint(1, 10)), -1])
    return struct.pack(">i", size) + payload


def _throw(host: str, port: int, frame: bytes) -> None:
    """Sends one frame, half-closes, and drains whatever comes back until the broker closes.

    A mutated request can be valid and legitimately slow (a Fetch whose max_wait became
    minutes), so a broker that is still waiting after a second is fine: we just hang up.
    """
    with socket.create_connection((host, port), timeout=1) as sock:
        try:
            sock.sendall(frame)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except (ConnectionResetError, BrokenPipeError, TimeoutError):
            pass


def test_random_and_mutated_frames_never_break_the_broker(broker, topic_name):
    rng = random.Random(SEED)
    valid = _valid_payloads(topic_name)
    with WireClient(broker.host, broker.port) as witness:
        for i in range(FRAMES):
            if rng.random() < 0.5:
                payload = _mutate(rng, rng.choice(valid))
            else:
                payload = rng.randbytes(rng.randint(0, 200))
            _throw(broker.host, broker.port, _frame(rng, payload))
            if i % 50 == 0:
                answer = witness.call(ApiVersionsRequest(
                    client_software_name="w", client_software_version="1"
                ))  # fmt: skip
                assert answer.error_code == ErrorCode.none, f"seed {SEED}, frame {i}"
        assert broker.running, f"broker died (seed {SEED}):\n{broker.log()[-3000:]}"
        answer = witness.call(
            ApiVersionsRequest(client_software_name="w", client_software_version="1")
        )
        assert answer.error_code == ErrorCode.none
    log = broker.log()
    for crash in ("handler failed", "connection task failed"):
        at = log.find(crash)
        assert at < 0, f"seed {SEED}: {crash}:\n{log[at - 200 : at + 3000]}"
