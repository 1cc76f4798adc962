"""The native read path against a real broker: the same rows as the confluent-kafka path.

Every comparison reads one range twice, with ``native=False`` (confluent-kafka ``consume()``)
and through :class:`NativeRange` (Fetch on a socket, numba decode), and first asserts that the
native read really finished on its own (a silent fallback would make the comparison vacuous).
Batch boundaries differ between the paths (one ``consume()`` vs one fetch), so whole tables are
compared, column by column and with their exact Arrow types.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pyarrow as pa
import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from crc32c import crc32c

from spark_pipelines.datasource import _fetch, _kafka
from spark_pipelines.datasource._kafka import ARROW_SCHEMA
from spark_pipelines.datasource._options import OptionError, Options
from spark_pipelines.datasource.reader import SluiceBatchReader
from tests.fixtures.broker import BrokerProcess
from tests.spark_pipelines._kafka import create_topic
from tests.spark_pipelines.datasource._batches import batch, produce_raw

pytestmark = pytest.mark.skipif(
    _fetch.native_decoder() is None, reason="numba decoder unavailable here"
)


def _config(bootstrap: str, **extra: str) -> dict[str, str]:
    return {"bootstrap.servers": bootstrap, **extra}


def _general(config: dict[str, str], topic: str, p: int, start: int, end: int) -> pa.Table:
    batches = list(_kafka.read_range(config, topic, p, start, end, native=False))
    return pa.Table.from_batches(batches, ARROW_SCHEMA).combine_chunks()


def _native_range(
    config: dict[str, str], topic: str, p: int, start: int, end: int
) -> _fetch.NativeRange:
    client = _kafka.consumer(config)
    try:
        native = _kafka._native_reader(client, config, topic, p, start, end)
    finally:
        client.close()
    assert native is not None, "native path refused the range"
    return native


def _native(config: dict[str, str], topic: str, p: int, start: int, end: int) -> pa.Table:
    native = _native_range(config, topic, p, start, end)
    batches = list(native.batches())
    assert native.finished, f"native path fell back at offset {native.position}"
    _assert_compact(batches)
    return pa.Table.from_batches(batches, ARROW_SCHEMA).combine_chunks()


def _assert_compact(batches: list[pa.RecordBatch]) -> None:
    """No batch is a slice of a bigger one, whose buffers Arrow IPC would ship along."""
    for b in batches:
        for name, col in zip(b.schema.names, b.columns, strict=True):
            assert col.get_total_buffer_size() <= col.nbytes + 64, name


def _assert_same(bootstrap: str, topic: str, p: int, start: int, end: int, **extra: str) -> int:
    """Both paths give equal tables for ``[start, end)``; returns the row count."""
    config = _config(bootstrap, **extra)
    expected = _general(config, topic, p, start, end)
    got = _native(config, topic, p, start, end)
    assert got.schema == expected.schema
    for name in ARROW_SCHEMA.names:
        assert got.column(name).to_pylist() == expected.column(name).to_pylist(), name
    assert got.equals(expected)
    return got.num_rows


def _producer(bootstrap: str, **conf: object) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, **conf})


MIXED: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]] | None]] = [
    (b"k0", b"plain", None),
    (None, b"", [("a", b"1"), ("b", None), ("a", b"dup")]),
    (b"", None, None),
    (None, b"x" * 10_000, [("", b"")]),
    (b"\x00\xff", b"{}", [("utf8-\u00e9", b"\xff")]),
]


def _produce_mixed(bootstrap: str, topic: str, rounds: int, **conf: object) -> int:
    prod = _producer(bootstrap, **conf)
    n = 0
    for i in range(rounds):
        for key, value, headers in MIXED:
            kwargs = {"headers": headers} if headers else {}
            prod.produce(topic, value, key, partition=0, timestamp=1_700_000_000_000 + i, **kwargs)
            n += 1
    assert prod.flush(30) == 0
    return n


def test_keys_values_headers_match(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    n = _produce_mixed(broker.bootstrap, topic_name, 40)
    assert _assert_same(broker.bootstrap, topic_name, 0, 0, n) == n
    # Ranges starting and ending inside batches (40 rounds -> few, large batches).
    assert _assert_same(broker.bootstrap, topic_name, 0, 3, n - 7) == n - 10
    assert _assert_same(broker.bootstrap, topic_name, 0, 101, 102) == 1
    # One batch per fetch (the broker's minimum); the reader joins them into bigger batches.
    one_each = {"max.partition.fetch.bytes": "1"}
    assert _assert_same(broker.bootstrap, topic_name, 0, 0, n, **one_each) == n
    native = _native_range(_config(broker.bootstrap, **one_each), topic_name, 0, 0, n)
    sizes = [b.num_rows for b in native.batches()]
    assert sum(sizes) == n and len(sizes) < 5, sizes
    # Cut into small batches: each one compact (checked in _native), together the same rows.
    small = _fetch.NativeRange(
        _config(broker.bootstrap), _leader(broker.bootstrap, topic_name), topic_name, 0, 3, n,
        ARROW_SCHEMA, batch_rows=7, timeout=10,
    )  # fmt: skip
    batches = list(small.batches())
    assert small.finished and {b.num_rows for b in batches[:-1]} == {7}
    _assert_compact(batches)
    expected = _general(_config(broker.bootstrap), topic_name, 0, 3, n)
    assert pa.Table.from_batches(batches).combine_chunks().equals(expected)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_every_codec_matches(broker, topic_name, codec):
    create_topic(broker.bootstrap, topic_name, 1)
    n = _produce_mixed(broker.bootstrap, topic_name, 30, **{"compression.type": codec})
    assert _assert_same(broker.bootstrap, topic_name, 0, 0, n) == n
    assert _assert_same(broker.bootstrap, topic_name, 0, 17, 61) == 44


def test_log_append_time_topic_matches(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1, **{"message.timestamp.type": "LogAppendTime"})
    n = _produce_mixed(broker.bootstrap, topic_name, 10)
    assert _assert_same(broker.bootstrap, topic_name, 0, 0, n) == n
    table = _native(_config(broker.bootstrap), topic_name, 0, 0, n)
    assert set(table.column("timestampType").to_pylist()) == {1}
    stamps = table.column("timestamp").to_pylist()
    assert stamps[0].year >= 2026  # the broker's clock, not the producer's 2023 timestamps


def _txn_producer(bootstrap: str, txn_id: str) -> Producer:
    prod = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                     "log_level": 0})  # fmt: skip
    prod.init_transactions(30)
    return prod


def test_transaction_markers_leave_holes_that_both_paths_skip(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    txn = _txn_producer(broker.bootstrap, topic_name)
    for pair in ((0, 1), (2, 3)):  # two committed transactions: 0, 1, marker 2; 3, 4, marker 5
        txn.begin_transaction()
        for i in pair:
            txn.produce(topic_name, f"v{i}".encode(), f"k{i}".encode(), partition=0)
        txn.commit_transaction(30)
    plain = _producer(broker.bootstrap)
    plain.produce(topic_name, b"v0", b"k0", partition=0)
    assert plain.flush(30) == 0
    assert _assert_same(broker.bootstrap, topic_name, 0, 0, 7) == 5
    table = _native(_config(broker.bootstrap), topic_name, 0, 0, 7)
    assert table.column("offset").to_pylist() == [0, 1, 3, 4, 6]
    # A range that ends on a marker, and one that holds nothing but a marker.
    assert _assert_same(broker.bootstrap, topic_name, 0, 1, 6) == 3
    assert _native(_config(broker.bootstrap), topic_name, 0, 5, 6).num_rows == 0


def test_aborted_transactions_are_dropped_on_the_native_path(broker, topic_name):
    """read_committed: the fetch lists the aborted transactions and the native decoder drops
    their batches itself (no fallback), giving exactly the rows librdkafka gives."""
    create_topic(broker.bootstrap, topic_name, 1)
    good = _txn_producer(broker.bootstrap, f"{topic_name}-good")
    bad = _txn_producer(broker.bootstrap, f"{topic_name}-bad")
    good.begin_transaction()
    bad.begin_transaction()
    for i in range(3):  # the two transactions interleave in the log
        good.produce(topic_name, f"good{i}".encode(), partition=0)
        good.flush(30)
        bad.produce(topic_name, f"bad{i}".encode(), partition=0)
        bad.flush(30)
    good.commit_transaction(30)
    bad.abort_transaction(30)
    bad.begin_transaction()
    bad.produce(topic_name, b"bad-then-good", partition=0)
    bad.commit_transaction(30)  # the same producer's next transaction is visible again
    end = 10  # 6 records, 2 markers, 1 record, 1 marker
    assert _assert_same(broker.bootstrap, topic_name, 0, 0, end) == 4
    values = _native(_config(broker.bootstrap), topic_name, 0, 0, end).column("value")
    assert [bytes(v) for v in values.to_pylist()] == [
        b"good0", b"good1", b"good2", b"bad-then-good",
    ]  # fmt: skip
    raw = _native(_config(broker.bootstrap, **{"isolation.level": "read_uncommitted"}),
                  topic_name, 0, 0, end)  # fmt: skip
    assert raw.num_rows == 7


def test_records_without_timestamp_match(broker, topic_name):
    """Timestamp -1 (a producer that set none): null on both paths, type still CreateTime."""
    create_topic(broker.bootstrap, topic_name, 1)
    recs = [(b"k", b"v", ()), (None, b"w", ())]
    produce_raw(broker.bootstrap, topic_name, 0, batch(0, recs, first_timestamp=-1))
    produce_raw(broker.bootstrap, topic_name, 0, batch(0, recs[:1]))
    assert _assert_same(broker.bootstrap, topic_name, 0, 0, 3) == 3
    table = _native(_config(broker.bootstrap), topic_name, 0, 0, 3)
    assert table.column("timestamp").null_count == 1  # delta 0 gives -1; delta 1 gives 0
    assert table.column("timestampType").to_pylist() == [0, 0, 0]


def test_no_records_before_the_deadline_raises_like_the_general_path(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    _produce_mixed(broker.bootstrap, topic_name, 1)
    native = _fetch.NativeRange(
        _config(broker.bootstrap), _leader(broker.bootstrap, topic_name), topic_name, 0, 0, 50,
        ARROW_SCHEMA, batch_rows=10, timeout=1,
    )  # fmt: skip
    with pytest.raises(TimeoutError, match=rf"no records from {topic_name}-0 at offset < 50"):
        list(native.batches())


def _leader(bootstrap: str, topic: str) -> tuple[str, int]:
    native = _native_range(_config(bootstrap), topic, 0, 0, 1)
    return native.leader


def test_compacted_topic_holes_match(tmp_path, topic_name):
    from broker.log.log_manager import LogManager

    proc = BrokerProcess(tmp_path / "data")
    proc.start()
    try:
        create_topic(
            proc.bootstrap, topic_name, 1,
            **{"cleanup.policy": "compact", "segment.bytes": "2000",
               "min.cleanable.dirty.ratio": "0.01"},
        )  # fmt: skip
        prod = _producer(proc.bootstrap, **{"linger.ms": 0})
        for i in range(120):
            prod.produce(topic_name, f"value-{i}".encode(), f"key-{i % 7}".encode(), partition=0)
            if i % 10 == 9:
                prod.flush(10)
        assert prod.flush(30) == 0
        assert proc.stop() == 0
        logs = LogManager(proc.data_dir)
        logs.load()
        assert logs.run_cleaner(now_ms=int(time.time() * 1000)) > 0
        logs.close()
        proc.start()
        table = _native(_config(proc.bootstrap), topic_name, 0, 0, 120)
        offsets = table.column("offset").to_pylist()
        assert 7 <= len(offsets) < 120  # holes: older values of each key are gone
        assert _assert_same(proc.bootstrap, topic_name, 0, 0, 120) == len(offsets)
        assert _assert_same(proc.bootstrap, topic_name, 0, 5, 117) > 0
    finally:
        proc.stop()


def test_start_below_log_start_falls_back_and_reads_from_it(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    n = _produce_mixed(broker.bootstrap, topic_name, 4)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    (future,) = admin.delete_records([TopicPartition(topic_name, 0, 6)]).values()
    future.result(20)
    config = _config(broker.bootstrap)
    native = _native_range(config, topic_name, 0, 0, n)
    assert list(native.batches()) == [] and not native.finished and native.position == 0
    expected = _general(config, topic_name, 0, 0, n)
    got = pa.Table.from_batches(list(_kafka.read_range(config, topic_name, 0, 0, n)))
    assert expected.column("offset").to_pylist() == list(range(6, n))
    assert got.combine_chunks().equals(expected)


def test_unreadable_batch_hands_the_rest_to_confluent_kafka(broker, topic_name):
    """A header key that is not UTF-8 stops the native path at that fetch; what was yielded
    before is exact and the position says where confluent-kafka takes over (which then fails
    on that record exactly as the general path does)."""
    create_topic(broker.bootstrap, topic_name, 1)
    recs = [(None, f"v{i}".encode(), ()) for i in range(3)]
    produce_raw(broker.bootstrap, topic_name, 0, batch(0, recs))
    config = _config(broker.bootstrap, **{"max.partition.fetch.bytes": "1"})
    bad = bytearray(batch(0, [(None, b"v", [("k", b"v")])]).replace(b"\x02k", b"\x02\xff"))
    bad[17:21] = crc32c(bytes(bad[21:])).to_bytes(4, "big")
    produce_raw(broker.bootstrap, topic_name, 0, bytes(bad))
    native = _native_range(config, topic_name, 0, 0, 4)
    rows = pa.Table.from_batches(list(native.batches()), ARROW_SCHEMA)
    assert rows.column("offset").to_pylist() == [0, 1, 2]
    assert not native.finished and native.position == 3
    errors = []
    for use_native in (False, True):
        with pytest.raises(Exception) as caught:
            list(_kafka.read_range(config, topic_name, 0, 0, 4, native=use_native))
        errors.append(type(caught.value))
    assert errors[0] is errors[1]


def test_secure_configs_are_left_to_confluent_kafka():
    assert _fetch.usable({"bootstrap.servers": "x"}) is None
    assert _fetch.usable({"security.protocol": "PLAINTEXT"}) is None
    assert _fetch.usable({"isolation.level": "read_uncommitted"}) is None
    assert _fetch.usable({"security.protocol": "SSL"}) == "security.protocol=ssl"
    assert _fetch.usable({"sasl.mechanism": "PLAIN"}) == "sasl.mechanism is set"
    assert _fetch.usable({"ssl.ca.location": "/x"}) == "ssl.ca.location is set"
    assert "check.crcs" in (_fetch.usable({"check.crcs": "true"}) or "")


def test_unreachable_leader_falls_back_without_yielding(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    native = _fetch.NativeRange(
        _config(broker.bootstrap), ("127.0.0.1", _closed_port()), topic_name, 0, 0, 5,
        ARROW_SCHEMA, batch_rows=10, timeout=5,
    )  # fmt: skip
    assert list(native.batches()) == []
    assert not native.finished and native.position == 0


def test_fetch_native_option(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    n = _produce_mixed(broker.bootstrap, topic_name, 2)
    opts = {"kafka.bootstrap.servers": broker.bootstrap, "subscribe": topic_name}
    on = SluiceBatchReader(opts).partitions()
    off = SluiceBatchReader({**opts, "fetch.native": "false"}).partitions()
    assert [p.native for p in on] == [True] and [p.native for p in off] == [False]
    tables = [
        pa.Table.from_batches(list(SluiceBatchReader(opts).read(p))).combine_chunks()
        for p in (on[0], off[0])
    ]
    assert tables[0].num_rows == n and tables[0].equals(tables[1])
    with pytest.raises(OptionError, match=r"fetch\.native"):
        Options({"fetch.native": "maybe"}).fetch_native()


def test_value_json_fields_same_on_both_paths(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    prod = _producer(broker.bootstrap)
    values = [b'{"a": "x", "b": 1}', b'{"a": "y"}', b"not json", b"", b'{"b": [1, 2]}']
    for v in values * 3:
        prod.produce(topic_name, v, partition=0)
    assert prod.flush(30) == 0
    config = _config(broker.bootstrap)
    fields = ("a", "b")
    native = pa.Table.from_batches(list(_kafka.read_range(config, topic_name, 0, 0, 15, fields)))
    general = pa.Table.from_batches(
        list(_kafka.read_range(config, topic_name, 0, 0, 15, fields, native=False))
    )
    assert native.combine_chunks().equals(general.combine_chunks())
    assert native.column("value_json").to_pylist()[:2] == [
        {"a": "x", "b": "1"},
        {"a": "y", "b": None},
    ]


def _closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_WITHOUT_NUMBA = """
import sys
sys.modules["numba"] = None  # as if numba were not installed: importing it raises
from spark_pipelines.datasource import _fetch, _kafka
assert _fetch.native_decoder() is None
rows = sum(b.num_rows for b in _kafka.read_range({"bootstrap.servers": sys.argv[1]},
                                                 sys.argv[2], 0, 0, int(sys.argv[3])))
print(rows)
"""


def test_without_numba_the_data_source_still_reads(broker, topic_name):
    create_topic(broker.bootstrap, topic_name, 1)
    n = _produce_mixed(broker.bootstrap, topic_name, 3)
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_NUMBA, broker.bootstrap, topic_name, str(n)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == str(n)
