"""Keys and values of the records in ``__consumer_offsets``, in Apache Kafka's own encoding.

Using Kafka's layout (non-flexible ``OffsetCommitKey``/``OffsetCommitValue`` and
``GroupMetadataKey``/``GroupMetadataValue``) costs nothing extra and means tools that decode
Kafka's offsets topic can read ours. All integers are big-endian; a string is an int16 length
then UTF-8 bytes (length -1 = null); ``bytes`` is an int32 length then the bytes.

Keys (the int16 version says which kind of record it is, so compaction keeps one per key)::

    offset commit   version=1  group:string topic:string partition:int32
    group metadata  version=2  group:string

Values::

    offset commit   version=3  offset:int64 leader_epoch:int32 metadata:string
                               commit_timestamp:int64
    group metadata  version=3  protocol_type:string generation:int32 protocol:string?
                               leader:string? current_state_timestamp:int64
                               members:int32 count of [member_id:string group_instance_id:string?
                                 client_id:string client_host:string rebalance_timeout:int32
                                 session_timeout:int32 subscription:bytes assignment:bytes]

A record with a null value is a tombstone: the offset (or the whole group) was deleted.
Decoding accepts the older value versions Kafka wrote (offset v1 with expire_timestamp, group
v0-v2) so a data directory copied from Kafka would load; we always write the versions above.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

OFFSET_KEY_VERSION = 1
GROUP_KEY_VERSION = 2


@dataclass(frozen=True, slots=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class GroupKey:
    group: str


@dataclass(frozen=True, slots=True)
class OffsetValue:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1


@dataclass(frozen=True, slots=True)
class MemberValue:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int = -1
    members: tuple[MemberValue, ...] = field(default_factory=tuple)


class _Writer:
    def __init__(self) -> None:
        self.buf = bytearray()

    def int16(self, v: int) -> _Writer:
        self.buf += struct.pack(">h", v)
        return self

    def int32(self, v: int) -> _Writer:
        self.buf += struct.pack(">i", v)
        return self

    def int64(self, v: int) -> _Writer:
        self.buf += struct.pack(">q", v)
        return self

    def string(self, v: str | None) -> _Writer:
        if v is None:
            return self.int16(-1)
        raw = v.encode()
        self.int16(len(raw))
        self.buf += raw
        return self

    def bytes_(self, v: bytes) -> _Writer:
        self.int32(len(v))
        self.buf += v
        return self


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, fmt: str) -> int:
        try:
            (v,) = struct.unpack_from(fmt, self.data, self.pos)
        except struct.error as exc:  # a short record: report it like any other bad value
            raise ValueError(f"record ends early: {exc}") from None
        self.pos += struct.calcsize(fmt)
        return int(v)

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def int64(self) -> int:
        return self._take(">q")

    def string(self) -> str | None:
        n = self.int16()
        if n < 0:
            return None
        raw = self.data[self.pos : self.pos + n]
        if len(raw) != n:
            raise ValueError("string runs past the end of the record")
        self.pos += n
        return raw.decode()

    def bytes_(self) -> bytes:
        n = max(self.int32(), 0)  # null bytes (-1) read as empty, as Kafka's loader does
        raw = self.data[self.pos : self.pos + n]
        if len(raw) != n:
            raise ValueError("bytes run past the end of the record")
        self.pos += n
        return raw


def encode_key(key: OffsetKey | GroupKey) -> bytes:
    w = _Writer()
    if isinstance(key, OffsetKey):
        w.int16(OFFSET_KEY_VERSION).string(key.group).string(key.topic).int32(key.partition)
    else:
        w.int16(GROUP_KEY_VERSION).string(key.group)
    return bytes(w.buf)


def decode_key(data: bytes) -> OffsetKey | GroupKey:
    """Raises ValueError for a key this broker does not understand (the loader skips it)."""
    r = _Reader(data)
    version = r.int16()
    if version in (0, 1):
        return OffsetKey(r.string() or "", r.string() or "", r.int32())
    if version == 2:
        return GroupKey(r.string() or "")
    raise ValueError(f"unknown __consumer_offsets key version {version}")


def encode_offset(value: OffsetValue) -> bytes:
    w = _Writer().int16(3).int64(value.offset).int32(value.leader_epoch)
    return bytes(w.string(value.metadata).int64(value.commit_timestamp).buf)


def decode_offset(data: bytes) -> OffsetValue:
    r = _Reader(data)
    version = r.int16()
    offset = r.int64()
    epoch = r.int32() if version >= 3 else -1
    metadata = r.string() or ""
    commit_ts = r.int64()
    return OffsetValue(offset, epoch, metadata, commit_ts)


def encode_group(value: GroupValue) -> bytes:
    w = _Writer().int16(3).string(value.protocol_type).int32(value.generation)
    w.string(value.protocol).string(value.leader).int64(value.current_state_timestamp)
    w.int32(len(value.members))
    for m in value.members:
        w.string(m.member_id).string(m.group_instance_id).string(m.client_id)
        w.string(m.client_host).int32(m.rebalance_timeout_ms).int32(m.session_timeout_ms)
        w.bytes_(m.subscription).bytes_(m.assignment)
    return bytes(w.buf)


def decode_group(data: bytes) -> GroupValue:
    r = _Reader(data)
    version = r.int16()
    protocol_type = r.string() or ""
    generation = r.int32()
    protocol = r.string()
    leader = r.string()
    state_ts = r.int64() if version >= 2 else -1
    members = []
    for _ in range(r.int32()):
        member_id = r.string() or ""
        instance_id = r.string() if version >= 3 else None
        client_id = r.string() or ""
        client_host = r.string() or ""
        rebalance_timeout = r.int32() if version >= 1 else -1
        session_timeout = r.int32()
        rebalance_timeout = session_timeout if rebalance_timeout < 0 else rebalance_timeout
        members.append(
            MemberValue(
                member_id,
                instance_id,
                client_id,
                client_host,
                rebalance_timeout,
                session_timeout,
                r.bytes_(),
                r.bytes_(),
            )
        )
    return GroupValue(protocol_type, generation, protocol, leader, state_ts, tuple(members))
