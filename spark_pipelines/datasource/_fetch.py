"""The native read path: Fetch requests on a plain socket, records decoded into Arrow by numba.

Why: confluent-kafka hands every record to Python as a ``Message`` object, which alone costs
more CPU than Spark spends moving the same rows out of an in-memory Arrow source. Here a read
task sends Kafka Fetch requests itself (encoded and decoded by ``kio``, as the broker does) to
the partition's leader and decodes the returned record batches with ``_decode``; no Python code
runs per record.

What stays with confluent-kafka: planning (metadata, watermarks, offsets for timestamps) and
finding the leader (``list_topics``). Everything here is exact or not done at all: whenever
the fast path cannot guarantee the same rows as the confluent-kafka path it raises
:class:`Unsupported` *before* yielding anything it is unsure of, and ``_kafka.read_range``
continues from :attr:`NativeRange.position` with confluent-kafka. That covers: TLS or SASL
configured, ``check.crcs=true`` (CRCs are not verified here), the leader not known, a broker
without Fetch v11, any error code in a response (leader moved, offset out of range, ...),
throttling, a preferred read replica, batches with magic < 2, an unknown codec, malformed
batches, header keys that are not UTF-8, socket errors.

Transactions: ``read_committed`` fetches stop at the last stable offset (the broker bounds
them) and list the aborted transactions of the returned range; ``aborted_batches`` applies
Kafka's consumer rule to them per response (a producer's transactional batches from an aborted
transaction's first offset up to its abort marker are dropped, by batch, with no per-record
work), so reads with aborted data stay on the fast path.

Protocol: Fetch v11 (Kafka 2.3+ and our broker; Kafka 4 serves v4-v17), sessionless
(``session_id`` 0, epoch -1, KIP-227), ``isolation_level`` 1 (read_committed, librdkafka's
default) unless ``kafka.isolation.level`` says otherwise. One request is kept in flight: as soon
as a response's batch headers are scanned, the request for the next offset goes out, so the
broker reads the log while this task decodes. A fetch returns whole batches, so the first may
start before ``start``; records outside ``[start, end)`` are dropped in the decoder, and control
batches (transaction markers) only move the position.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa
from cramjam import DecompressionError
from kio.schema.errors import ErrorCode
from kio.serial.errors import SerialError

from spark_pipelines.datasource._aborted import aborted_batches
from spark_pipelines.datasource._columns import decompress, to_arrow
from spark_pipelines.datasource._connection import (
    Connection,
    ProtocolError,
    request_class,
    serves,
)
from spark_pipelines.errors import Unsupported

log = logging.getLogger(__name__)

FETCH_KEY = 1
FETCH_VERSION = 11
MAX_WAIT = timedelta(milliseconds=500)
READ_UNCOMMITTED, READ_COMMITTED = 0, 1
_SECURE_PREFIXES = ("sasl.", "ssl.")


class _NoRecords(TimeoutError):
    """Nothing below the range's end arrived in time (what ``read_range`` raises either way).

    A TimeoutError is an OSError, which otherwise means "fall back"; this one must not."""


def native_decoder() -> Any:
    """The ``_decode`` module, or None if numba (or compiling with it) is not available here.

    Importing numba and loading the cached machine code costs ~0.8 s once per Python worker;
    a failure of any kind (numba missing, LLVM unavailable, a compile error) only disables the
    fast path, so it is checked once and remembered.
    """
    return _load_decoder()


@cache
def _load_decoder() -> Any:
    try:
        from spark_pipelines.datasource import _decode

        # Compile (or load from the cache) both loops now, with the argument types reads use,
        # so a compile failure disables the fast path instead of failing a read.
        empty = _readonly(np.zeros(0, np.uint8))
        _decode.scan(empty)
        if _decode.decode([(empty, np.zeros((0, 7), np.int64))], 0, 1) is None:
            raise RuntimeError("decoder self-check failed")
    except Exception as exc:  # any failure only means: use the general path
        log.debug("native fetch path unavailable: %r", exc)
        return None
    return _decode


def usable(kafka_config: Mapping[str, str]) -> str | None:
    """Why the fast path cannot serve this client configuration (None: it can)."""
    protocol = kafka_config.get("security.protocol", "plaintext").lower()
    if protocol != "plaintext":
        return f"security.protocol={protocol}"
    secure = [k for k in kafka_config if k.lower().startswith(_SECURE_PREFIXES)]
    if secure:
        return f"{secure[0]} is set"
    level = kafka_config.get("isolation.level", "read_committed").lower()
    if level not in ("read_committed", "read_uncommitted"):
        return f"isolation.level={level}"
    if kafka_config.get("check.crcs", "false").lower() == "true":
        return "check.crcs=true (the native path does not verify CRCs)"
    return None


class NativeRange:
    """Reads ``[start, end)`` of one partition from its leader; see the module docstring.

    Iterate :meth:`batches`; afterwards :attr:`finished` says whether the whole range was
    delivered, and if not, :attr:`position` is the first offset the caller must still read
    (every record below it was yielded, every record at or above it was not).
    """

    def __init__(
        self,
        kafka_config: Mapping[str, str],
        leader: tuple[str, int],
        topic: str,
        partition: int,
        start: int,
        end: int,
        schema: pa.Schema,
        *,
        batch_rows: int,
        timeout: float,
    ) -> None:
        self.kafka_config = kafka_config
        self.leader = leader
        self.topic = topic
        self.partition = partition
        self.position = start
        self.end = end
        self.schema = schema
        self.batch_rows = batch_rows
        self.timeout = timeout
        self.finished = False
        level = kafka_config.get("isolation.level", "read_committed").lower()
        self.isolation = READ_UNCOMMITTED if level == "read_uncommitted" else READ_COMMITTED
        self.max_bytes = int(kafka_config.get("fetch.max.bytes", 64 << 20))
        self.partition_max_bytes = int(kafka_config.get("max.partition.fetch.bytes", 16 << 20))

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Arrow batches of ``schema`` until the range is read or the fast path gives up."""
        decoder = native_decoder()
        if decoder is None:
            return
        try:
            conn = Connection(*self.leader, self.kafka_config.get("client.id", "sluice-spark"),
                              self.timeout)  # fmt: skip
        except OSError as exc:
            log.debug("native fetch %s-%d: cannot connect to %s: %r",
                      self.topic, self.partition, self.leader, exc)  # fmt: skip
            return
        out = _Coalescer(self.batch_rows)
        try:
            for batch in self._read(conn, decoder):
                yield from out.add(batch)
        except _NoRecords:
            raise  # as the confluent-kafka path would after the same wait: no second wait
        except (
            Unsupported, ProtocolError, OSError, SerialError, ValueError, pa.ArrowInvalid,
            DecompressionError,
        ) as exc:  # fmt: skip
            # ValueError: kio meeting a value it has no enum member for (a newer error code).
            log.debug(
                "native fetch %s-%d falls back at offset %d: %s",
                self.topic, self.partition, self.position, exc,
            )  # fmt: skip
        finally:
            conn.close()
        yield from out.flush()

    def _request(self, offset: int) -> Any:
        request_cls = request_class(FETCH_KEY, FETCH_VERSION)
        mod = _module_of(request_cls)
        return request_cls(
            replica_id=-1,
            max_wait=MAX_WAIT,
            min_bytes=1,
            max_bytes=self.max_bytes,
            isolation_level=self.isolation,
            session_id=0,
            session_epoch=-1,
            topics=(
                mod.FetchTopic(
                    topic=self.topic,
                    partitions=(
                        mod.FetchPartition(
                            partition=self.partition,
                            current_leader_epoch=-1,
                            fetch_offset=offset,
                            log_start_offset=-1,
                            partition_max_bytes=self.partition_max_bytes,
                        ),
                    ),
                ),
            ),
            forgotten_topics_data=(),
            rack_id="",
        )

    def _partition_data(self, response: Any) -> Any:
        if response.error_code != ErrorCode.none:
            raise Unsupported(f"fetch error {response.error_code.name}")
        for topic in response.responses:
            if topic.topic != self.topic:
                continue
            for part in topic.partitions:
                if part.partition_index == self.partition:
                    return part
        if response.throttle_time:
            raise Unsupported("throttled")
        raise Unsupported("partition missing from the fetch response")

    def _read(self, conn: Connection, dec: Any) -> Iterator[pa.RecordBatch]:
        if not serves(conn, FETCH_KEY, FETCH_VERSION):
            raise Unsupported(f"broker does not serve Fetch v{FETCH_VERSION}")
        conn.send(FETCH_KEY, FETCH_VERSION, self._request(self.position))
        deadline = time.monotonic() + self.timeout
        while True:
            response = conn.receive()
            part = self._partition_data(response)
            if part.error_code != ErrorCode.none:
                raise Unsupported(f"partition error {part.error_code.name}")
            if getattr(part, "preferred_read_replica", -1) >= 0:
                # KIP-392: the leader sent no records and names a follower to read from.
                raise Unsupported(f"preferred read replica {part.preferred_read_replica}")
            scanned = scan_records(dec, part.records or b"")
            if scanned.following is None:
                if scanned.problem is not None:
                    raise Unsupported(scanned.problem)
                if response.throttle_time:  # empty because throttled, not because at the end
                    raise Unsupported("throttled")
                stable = part.last_stable_offset
                if self.isolation == READ_UNCOMMITTED or stable < 0:
                    stable = part.high_watermark
                if stable >= self.end:  # nothing left below end: the rest are holes
                    self.finished = True
                    return
                if time.monotonic() > deadline:
                    raise _NoRecords(
                        f"no records from {self.topic}-{self.partition} at offset < {self.end}"
                    )
                conn.send(FETCH_KEY, FETCH_VERSION, self._request(self.position))
                continue
            deadline = time.monotonic() + self.timeout
            if scanned.problem is None and scanned.following < self.end:
                # Next request out before decoding: the broker reads while we decode.
                conn.send(FETCH_KEY, FETCH_VERSION, self._request(scanned.following))
            drop = None
            if part.aborted_transactions and self.isolation == READ_COMMITTED:
                drop = aborted_batches(dec, scanned, part.aborted_transactions)
            cols = decode_scanned(dec, scanned, self.position, self.end, drop)
            if cols is None:
                raise Unsupported("malformed record batch")
            for lo in range(0, len(cols), self.batch_rows):
                hi = min(lo + self.batch_rows, len(cols))
                yield to_arrow(cols, self.topic, self.partition, self.schema, lo, hi)
            self.position = max(self.position, scanned.following)
            if self.position >= self.end:
                self.finished = True
                return
            if scanned.problem is not None:
                raise Unsupported(scanned.problem)


@dataclass(frozen=True)
class Scanned:
    """A fetch's ``records`` as far as the batch headers tell (see :func:`scan_records`)."""

    records: bytes
    buf: np.ndarray
    table: np.ndarray
    """One row per readable batch, columns ``_decode.SEC_START..COUNT``."""
    attrs: np.ndarray
    lasts: np.ndarray
    """Each readable batch's last offset."""
    following: int | None
    """The offset after the last readable batch; None if there is none."""
    problem: str | None
    """Why the batch after the readable ones (if any) cannot be read here."""


def scan_records(dec: Any, records: bytes) -> Scanned:
    """The complete batches of ``records`` up to the first one the fast path cannot read
    (magic < 2, unknown codec); a truncated last batch is left for the next fetch."""
    buf = np.frombuffer(records, np.uint8)
    base, last_delta, attrs, magic, base_ts, max_ts, count, rec_start, batch_end = dec.scan(buf)
    codec = attrs & dec.CODEC_MASK
    bad = (magic != 2) | (codec > 4)
    n = int(np.argmax(bad)) if bad.any() else len(base)
    problem = None
    if n < len(base):
        problem = f"batch at offset {base[n]}: magic {magic[n]}, codec {codec[n]}"
    elif n == 0 and len(buf):
        problem = "a batch larger than the fetch size"
    table = np.stack(
        [rec_start, batch_end, base, base_ts, max_ts, (attrs & dec.LOG_APPEND_TIME) != 0, count],
        axis=1,
    ).astype(np.int64)[:n]
    following = int(base[n - 1] + last_delta[n - 1] + 1) if n else None
    lasts = (base + last_delta)[:n].astype(np.int64)
    return Scanned(records, buf, table, attrs[:n], lasts, following, problem)


def decode_scanned(
    dec: Any, scanned: Scanned, start: int, end: int, drop: np.ndarray | None = None
) -> Any:
    """``_decode.Columns`` of the records in ``[start, end)`` of the readable batches, except
    those ``drop`` marks (aborted); None if one is malformed. Control batches (transaction
    markers) hold no records for the reader."""
    keep = (scanned.attrs & dec.CONTROL) == 0
    if drop is not None:
        keep &= ~drop
    table = scanned.table[keep]
    codec = (scanned.attrs & dec.CODEC_MASK)[keep]
    if not codec.any():
        segments = [(scanned.buf, table)]
    else:
        segments = _inflate(dec, scanned.records, scanned.buf, table, codec)
    return dec.decode(segments, start, end)


def _inflate(
    dec: Any, records: bytes, buf: np.ndarray, table: np.ndarray, codec: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Segments in batch order: runs of uncompressed batches read in place, each compressed
    batch's records section inflated on its own (one cramjam call per batch; the pieces are
    not copied together)."""
    segments: list[tuple[np.ndarray, np.ndarray]] = []
    view = memoryview(records)
    run = 0
    for i in range(len(codec)):
        if codec[i] == 0:
            continue
        if run < i:
            segments.append((buf, table[run:i]))
        raw = decompress(int(codec[i]), view[table[i, dec.SEC_START] : table[i, dec.SEC_END]])
        if raw is None:
            raise Unsupported(f"codec {codec[i]}")
        data = _readonly(np.frombuffer(raw, np.uint8))
        row = table[i : i + 1].copy()
        row[0, dec.SEC_START], row[0, dec.SEC_END] = 0, len(data)
        segments.append((data, row))
        run = i + 1
    if run < len(codec):
        segments.append((buf, table[run:]))
    return segments


class _Coalescer:
    """Joins small decoded batches into batches of up to ``rows`` rows, never slicing.

    A fetch response holds anything from one record to hundreds of thousands; the reader cuts
    big ones into compact batches of ``rows`` (``to_arrow(lo, hi)``), and this joins the small
    ones (a fetch's tail, or fetches of a slowly written partition) so Spark is not handed
    thousands of tiny batches. Joining copies; slicing is avoided because a slice carries its
    parent's buffers into Arrow IPC.
    """

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.pending: list[pa.RecordBatch] = []
        self.count = 0

    def add(self, batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
        if batch.num_rows == 0:
            return
        if self.pending and self.count + batch.num_rows > self.rows:
            yield from self.flush()
        if batch.num_rows >= self.rows:
            yield batch
            return
        self.pending.append(batch)
        self.count += batch.num_rows

    def flush(self) -> Iterator[pa.RecordBatch]:
        pending, self.pending, self.count = self.pending, [], 0
        if len(pending) == 1:
            yield pending[0]
        elif pending:
            yield pa.Table.from_batches(pending).combine_chunks().to_batches()[0]


def _readonly(arr: np.ndarray) -> np.ndarray:
    """Every data array numba sees is read-only (as arrays over ``bytes`` are): numba compiles
    one version per argument type, and writable and read-only arrays are different types."""
    arr.flags.writeable = False
    return arr


@cache
def _module_of(cls: type) -> Any:
    return sys.modules[cls.__module__]
