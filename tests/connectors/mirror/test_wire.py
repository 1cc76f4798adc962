"""MirrorMaker 2's binary records, byte for byte (the layouts of Kafka's Struct schemas)."""

from __future__ import annotations

import pytest

from connectors.mirror.wire import Checkpoint, Heartbeat, OffsetSync, WireError


def test_offset_sync_bytes() -> None:
    sync = OffsetSync("orders", 3, 41, 7)
    assert sync.key() == b"\x00\x06orders\x00\x00\x00\x03"
    assert sync.value() == (41).to_bytes(8, "big") + (7).to_bytes(8, "big")
    assert OffsetSync.decode(sync.key(), sync.value()) == sync


def test_checkpoint_bytes() -> None:
    cp = Checkpoint("g1", "A.orders", 0, 100, 90, "meta")
    assert cp.key() == b"\x00\x02g1\x00\x08A.orders\x00\x00\x00\x00"
    assert cp.value() == (
        b"\x00\x00" + (100).to_bytes(8, "big") + (90).to_bytes(8, "big") + b"\x00\x04meta"
    )
    assert Checkpoint.decode(cp.key(), cp.value()) == cp


def test_heartbeat_bytes() -> None:
    beat = Heartbeat("A", "B", 1_700_000_000_000)
    assert beat.key() == b"\x00\x01A\x00\x01B"
    assert beat.value() == b"\x00\x00" + (1_700_000_000_000).to_bytes(8, "big")
    assert Heartbeat.decode(beat.key(), beat.value()) == beat


def test_unicode_and_bad_input() -> None:
    cp = Checkpoint("grüppe", "t", 1, 2, 3)
    assert Checkpoint.decode(cp.key(), cp.value()).group == "grüppe"
    with pytest.raises(WireError):
        OffsetSync.decode(b"\x00\x05ab", b"")
    with pytest.raises(WireError):
        Checkpoint.decode(cp.key(), b"\x00\x01" + cp.value()[2:])  # unknown version
