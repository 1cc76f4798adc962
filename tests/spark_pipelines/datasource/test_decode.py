"""The numba record-batch decoder on hand-built batches (kafka-python encodes them).

Each test feeds the bytes a Fetch response would carry through the same steps as the native
read path (``scan_records`` -> ``decode_scanned`` -> ``to_arrow``) and checks every column
against what was encoded, including the cases a broker rarely produces (holes inside a batch,
control batches, truncated or malformed batches, xerial-framed snappy).
"""

from __future__ import annotations

import struct

import cramjam
import numpy as np
import pyarrow as pa
import pytest

from spark_pipelines.datasource import _columns, _decode, _fetch
from spark_pipelines.datasource._kafka import ARROW_SCHEMA
from tests.spark_pipelines.datasource._batches import CODECS, batch, commit_marker

T0 = 1_700_000_000_000


def _rows(records: bytes, start: int = 0, end: int = 1 << 62) -> list[dict]:
    scanned = _fetch.scan_records(_decode, records)
    cols = _fetch.decode_scanned(_decode, scanned, start, end)
    assert cols is not None
    out = _columns.to_arrow(cols, "t", 3, ARROW_SCHEMA)
    out.validate(full=True)
    assert out.schema == ARROW_SCHEMA
    return [
        {k: r[k] for k in ("key", "value", "offset", "timestamp", "timestampType", "headers")}
        | {"ms": int(r["timestamp"].timestamp() * 1000) if r["timestamp"] else None}
        for r in out.to_pylist()
    ]


MIXED = [
    (b"k1", b"v1", ()),
    (None, b"", [("a", b"x"), ("b", None), ("", b"")]),
    (b"", None, ()),
    (None, None, [("only", b"\x00\xff")]),
    (b"\xff" * 300, b"v" * 5000, ()),
]


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_every_field_and_codec(codec):
    rows = _rows(batch(100, MIXED, codec=CODECS[codec]))
    assert [r["offset"] for r in rows] == [100, 101, 102, 103, 104]
    assert [(r["key"], r["value"]) for r in rows] == [(k, v) for k, v, _ in MIXED]
    assert [r["headers"] for r in rows] == [
        None,
        [{"key": "a", "value": b"x"}, {"key": "b", "value": None}, {"key": "", "value": b""}],
        None,
        [{"key": "only", "value": b"\x00\xff"}],
        None,
    ]
    assert [r["ms"] for r in rows] == [T0 + i for i in range(5)]
    assert {r["timestampType"] for r in rows} == {0}


def test_log_append_time_reports_the_batch_max_timestamp():
    data = batch(0, MIXED[:2], log_append_time=T0 + 999) + batch(2, MIXED[2:3])
    rows = _rows(data)
    assert [(r["ms"], r["timestampType"]) for r in rows] == [
        (T0 + 999, 1),
        (T0 + 999, 1),
        (T0, 0),
    ]


def test_range_cuts_inside_batches_and_holes_are_skipped():
    recs = [(str(i).encode(), b"v", ()) for i in range(6)]
    data = batch(10, recs[:3], offset_deltas=[0, 2, 5]) + batch(16, recs[3:], codec=3)
    assert [r["offset"] for r in _rows(data)] == [10, 12, 15, 16, 17, 18]
    assert [r["offset"] for r in _rows(data, 12, 17)] == [12, 15, 16]
    assert [r["key"] for r in _rows(data, 13, 17)] == [b"2", b"3"]
    assert _rows(data, 19, 30) == []


def test_control_batches_are_skipped_but_move_the_position():
    data = batch(0, MIXED[:2], producer_id=7) + commit_marker(2, 7) + batch(3, MIXED[2:3])
    scanned = _fetch.scan_records(_decode, data)
    assert scanned.following == 4 and scanned.problem is None
    assert [r["offset"] for r in _rows(data)] == [0, 1, 3]
    marker_only = _fetch.scan_records(_decode, commit_marker(5, 7))
    assert marker_only.following == 6
    assert _rows(commit_marker(5, 7)) == []


def test_truncated_last_batch_is_left_for_the_next_fetch():
    whole = batch(0, MIXED[:2])
    data = whole + batch(2, MIXED[2:])[:-7]
    scanned = _fetch.scan_records(_decode, data)
    assert scanned.following == 2 and scanned.problem is None
    assert [r["offset"] for r in _rows(data)] == [0, 1]
    alone = _fetch.scan_records(_decode, batch(2, MIXED[2:])[:40])
    assert alone.following is None and alone.problem == "a batch larger than the fetch size"


def test_old_magic_and_unknown_codec_stop_the_scan_there():
    old = bytearray(batch(5, MIXED[:1]))
    old[16] = 1
    scanned = _fetch.scan_records(_decode, batch(0, MIXED) + bytes(old))
    assert scanned.following == 5 and "magic 1" in (scanned.problem or "")
    odd = bytearray(batch(5, MIXED[:1]))
    struct.pack_into(">h", odd, 21, 6)
    scanned = _fetch.scan_records(_decode, bytes(odd))
    assert scanned.following is None and "codec 6" in (scanned.problem or "")


def test_malformed_records_are_reported_not_read_past():
    good = batch(0, MIXED)
    for cut in (62, 70, len(good) - 3):
        bad = bytearray(good)
        struct.pack_into(">i", bad, 8, len(good) - 12)  # batch claims its full length ...
        bad[cut:] = b"\xff" * (len(good) - cut)  # ... but its records end in garbage
        scanned = _fetch.scan_records(_decode, bytes(bad))
        assert _fetch.decode_scanned(_decode, scanned, 0, 100) is None


def test_xerial_framed_snappy_as_the_java_producer_writes_it():
    payload = b"".join(
        struct.pack(">i", len(block)) + block
        for block in (
            bytes(cramjam.snappy.compress_raw(b"hello, ")),
            bytes(cramjam.snappy.compress_raw(b"world")),
        )
    )
    framed = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + payload
    assert bytes(_columns.decompress(2, framed)) == b"hello, world"
    assert bytes(_columns.decompress(2, bytes(cramjam.snappy.compress_raw(b"raw")))) == b"raw"
    assert _columns.decompress(7, b"") is None


def test_many_headers_grow_the_header_buffers():
    recs = [(None, b"v", [(f"h{j}", bytes([j]) * j) for j in range(40)]) for _ in range(10)]
    rows = _rows(batch(0, recs))
    assert all(len(r["headers"]) == 40 for r in rows)
    assert rows[-1]["headers"][39] == {"key": "h39", "value": bytes([39]) * 39}


def test_header_key_that_is_not_utf8_is_refused():
    data = batch(0, [(None, b"v", [("k", b"v")])])
    bad = data.replace(b"\x02k", b"\x02\xff")
    cols = _fetch.decode_scanned(_decode, _fetch.scan_records(_decode, bad), 0, 10)
    with pytest.raises(pa.ArrowInvalid, match=r"(?i)utf-?8"):
        _columns.to_arrow(cols, "t", 0, ARROW_SCHEMA)


def test_empty_input():
    scanned = _fetch.scan_records(_decode, b"")
    assert scanned.following is None and scanned.problem is None
    assert len(_decode.scan(np.zeros(0, np.uint8))[0]) == 0
