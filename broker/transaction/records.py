"""Keys and values of ``__transaction_state`` records, in Apache Kafka's own encoding.

Kafka's ``TransactionLogKey``/``TransactionLogValue`` layouts, so Kafka's tools can decode our
topic and ours can load a copy of Kafka's. Big-endian; a string is an int16 length then UTF-8
(-1 = null); an array is an int32 count (-1 = null) then its elements::

    key    version:int16 (0)  transactional_id:string

    value  version:int16 (0)  producer_id:int64  producer_epoch:int16
           transaction_timeout_ms:int32  transaction_status:int8
           transaction_partitions:[topic:string  partition_ids:[int32]]  (null when Empty)
           last_update_timestamp_ms:int64  start_timestamp_ms:int64

A null value (tombstone) deletes a transactional id that expired. We write value version 0;
version 1 (flexible: compact strings and arrays, tagged fields such as the previous producer
id) is read too, so a data dir written by a Kafka that uses it would load.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from broker.transaction.state import TxnState

KEY_VERSION = 0
VALUE_VERSION = 0


@dataclass(frozen=True, slots=True)
class TxnLogValue:
    """What a ``__transaction_state`` record says about one transactional id."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[tuple[str, int]]
    last_update_ms: int
    start_ms: int
    last_producer_id: int = -1


def encode_key(transactional_id: str) -> bytes:
    raw = transactional_id.encode()
    return struct.pack(">hh", KEY_VERSION, len(raw)) + raw


def decode_key(data: bytes) -> str:
    """Raises ValueError for a key this broker does not understand (the loader skips it)."""
    try:
        version, length = struct.unpack_from(">hh", data)
    except struct.error:
        raise ValueError("transaction log key ends early") from None
    if version != KEY_VERSION:
        raise ValueError(f"unknown __transaction_state key version {version}")
    raw = data[4 : 4 + length]
    if len(raw) != length:
        raise ValueError("transactional id runs past the end of the key")
    return raw.decode()


def encode_value(value: TxnLogValue) -> bytes:
    out = bytearray(
        struct.pack(
            ">hqhib", VALUE_VERSION, value.producer_id, value.producer_epoch, value.timeout_ms,
            value.state.value,
        )
    )  # fmt: skip
    if value.state is TxnState.EMPTY:
        out += struct.pack(">i", -1)
    else:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(value.partitions):
            by_topic.setdefault(topic, []).append(partition)
        out += struct.pack(">i", len(by_topic))
        for topic, partitions in by_topic.items():
            raw = topic.encode()
            out += struct.pack(">h", len(raw)) + raw + struct.pack(">i", len(partitions))
            out += struct.pack(f">{len(partitions)}i", *partitions)
    out += struct.pack(">qq", value.last_update_ms, value.start_ms)
    return bytes(out)


class _Reader:
    def __init__(self, data: bytes, flexible: bool) -> None:
        self.data, self.pos, self.flexible = data, 0, flexible

    def take(self, fmt: str) -> int:
        try:
            (v,) = struct.unpack_from(fmt, self.data, self.pos)
        except struct.error:
            raise ValueError("transaction log value ends early") from None
        self.pos += struct.calcsize(fmt)
        return int(v)

    def uvarint(self) -> int:
        shift = result = 0
        while True:
            byte = self.take(">B")
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def length(self, fmt: str) -> int:
        """An array/string length: int32/int16, or a compact unsigned varint (n + 1)."""
        return self.uvarint() - 1 if self.flexible else self.take(fmt)

    def string(self) -> str:
        n = self.length(">h")
        raw = self.data[self.pos : self.pos + max(n, 0)]
        if len(raw) != max(n, 0):
            raise ValueError("string runs past the end of the value")
        self.pos += max(n, 0)
        return raw.decode()

    def tags(self) -> dict[int, bytes]:
        out = {}
        if self.flexible:
            for _ in range(self.uvarint()):
                tag, size = self.uvarint(), self.uvarint()
                out[tag] = self.data[self.pos : self.pos + size]
                self.pos += size
        return out


def decode_value(data: bytes) -> TxnLogValue:
    """Raises ValueError for a value this broker cannot read (the loader skips the record)."""
    version = struct.unpack_from(">h", data)[0] if len(data) >= 2 else -1
    if version not in (0, 1):
        raise ValueError(f"unknown __transaction_state value version {version}")
    r = _Reader(data, flexible=version >= 1)
    r.pos = 2
    pid = r.take(">q")
    epoch = r.take(">h")
    timeout = r.take(">i")
    state = TxnState(r.take(">b"))
    partitions: set[tuple[str, int]] = set()
    for _ in range(max(r.length(">i"), 0)):
        topic = r.string()
        partitions.update((topic, r.take(">i")) for _ in range(max(r.length(">i"), 0)))
        r.tags()
    last_update = r.take(">q")
    start = r.take(">q")
    tags = r.tags()
    previous = struct.unpack(">q", tags[0])[0] if len(tags.get(0, b"")) == 8 else -1
    return TxnLogValue(pid, epoch, timeout, state, frozenset(partitions), last_update, start,
                       previous)  # fmt: skip
