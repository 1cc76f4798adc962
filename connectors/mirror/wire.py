"""MirrorMaker 2's record formats: offset syncs, checkpoints and heartbeats.

Each is a Kafka protocol struct (the encoding of Kafka's own requests): INT16/INT32/INT64 are
big-endian, a STRING is an INT16 byte length and UTF-8 bytes. Checkpoint and heartbeat values
start with an INT16 version (0). Byte-for-byte what Kafka's ``OffsetSync``, ``Checkpoint`` and
``Heartbeat`` classes write, so a Kafka MirrorMaker 2 and ``RemoteClusterUtils`` can read what
Sluice writes, and the other way round::

    offset sync   key   topic STRING, partition INT32
                  value upstreamOffset INT64, offset INT64
    checkpoint    key   group STRING, topic STRING, partition INT32
                  value version INT16, upstreamOffset INT64, offset INT64, metadata STRING
    heartbeat     key   sourceClusterAlias STRING, targetClusterAlias STRING
                  value version INT16, timestamp INT64
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from connectors.mirror.errors import WireError

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64_PAIR = struct.Struct(">qq")
_VERSION_0 = _I16.pack(0)


def _string(text: str) -> bytes:
    data = text.encode()
    if len(data) > 0x7FFF:
        raise WireError(f"string of {len(data)} bytes is too long for a Kafka STRING")
    return _I16.pack(len(data)) + data


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise WireError("truncated MirrorMaker record")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def int16(self) -> int:
        return int(_I16.unpack(self.take(2))[0])

    def int32(self) -> int:
        return int(_I32.unpack(self.take(4))[0])

    def int64_pair(self) -> tuple[int, int]:
        a, b = _I64_PAIR.unpack(self.take(16))
        return int(a), int(b)

    def string(self) -> str:
        size = self.int16()
        if size < 0:
            raise WireError("null where a STRING is required")
        return self.take(size).decode()

    def version(self) -> None:
        version = self.int16()
        if version != 0:
            raise WireError(f"unsupported MirrorMaker record version {version}")


@dataclass(frozen=True, slots=True)
class OffsetSync:
    """Upstream offset ``upstream`` of ``topic``/``partition`` was written downstream at
    ``downstream`` (both offsets of the same record)."""

    topic: str
    partition: int
    upstream: int
    downstream: int

    def key(self) -> bytes:
        return _string(self.topic) + _I32.pack(self.partition)

    def value(self) -> bytes:
        return _I64_PAIR.pack(self.upstream, self.downstream)

    @classmethod
    def decode(cls, key: bytes, value: bytes) -> OffsetSync:
        k, v = _Reader(key), _Reader(value)
        topic, partition = k.string(), k.int32()
        upstream, downstream = v.int64_pair()
        return cls(topic, partition, upstream, downstream)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Group ``group``'s committed ``upstream`` offset translates to ``downstream`` on the
    target, for the target's ``topic``/``partition`` (the remote name)."""

    group: str
    topic: str
    partition: int
    upstream: int
    downstream: int
    metadata: str = ""

    def key(self) -> bytes:
        return _string(self.group) + _string(self.topic) + _I32.pack(self.partition)

    def value(self) -> bytes:
        return _VERSION_0 + _I64_PAIR.pack(self.upstream, self.downstream) + _string(self.metadata)

    @classmethod
    def decode(cls, key: bytes, value: bytes) -> Checkpoint:
        k, v = _Reader(key), _Reader(value)
        group, topic, partition = k.string(), k.string(), k.int32()
        v.version()
        upstream, downstream = v.int64_pair()
        return cls(group, topic, partition, upstream, downstream, v.string())


@dataclass(frozen=True, slots=True)
class Heartbeat:
    source: str
    target: str
    timestamp: int

    def key(self) -> bytes:
        return _string(self.source) + _string(self.target)

    def value(self) -> bytes:
        return _VERSION_0 + self.timestamp.to_bytes(8, "big", signed=True)

    @classmethod
    def decode(cls, key: bytes, value: bytes) -> Heartbeat:
        k, v = _Reader(key), _Reader(value)
        source, target = k.string(), k.string()
        v.version()
        return cls(source, target, int.from_bytes(v.take(8), "big", signed=True))
