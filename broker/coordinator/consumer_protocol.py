"""Just enough of the "consumer" embedded protocol to see which topics a group subscribes to.

The coordinator treats member metadata and assignments as opaque bytes, as Kafka does; the one
exception is OffsetDelete, which must refuse to delete offsets of a topic an active consumer
group still subscribes to. Every version of ``ConsumerProtocolSubscription`` starts with
``version:int16`` then ``topics: int32 count of string``, and only that prefix is read.
"""

from __future__ import annotations

import struct


def subscription_topics(metadata: bytes) -> set[str] | None:
    """Topics in a consumer subscription, or None if the bytes are not one."""
    try:
        (count,) = struct.unpack_from(">i", metadata, 2)
        pos, topics = 6, set()
        for _ in range(count):
            (length,) = struct.unpack_from(">h", metadata, pos)
            pos += 2
            raw = metadata[pos : pos + length]
            if length < 0 or len(raw) != length:
                return None
            topics.add(raw.decode())
            pos += length
    except (struct.error, UnicodeDecodeError):
        return None
    return topics
