"""Record batches (magic v2) decoded straight into Arrow columns, with no Python per record.

The confluent-kafka read path builds one Python ``Message`` per record (~1 µs each) and then
collects every field back into columns. Here the ``records`` bytes of a Fetch response are
walked by numba-compiled loops instead:

1. :func:`scan` reads the 61-byte header of every *complete* batch in the buffer (a fetch may
   end with a truncated one) into per-batch arrays: base offset, last offset delta, attributes,
   magic, timestamps, record count and where its records section lies.
2. The caller (``_fetch``) decides per batch what to do: skip control batches, decompress the
   records section of compressed ones (``_columns.decompress``, cramjam), give up on anything
   it cannot read exactly (magic < 2, unknown codec).
3. :func:`decode` walks the records sections and writes every record with
   ``start <= offset < end`` into flat arrays: offsets, timestamps, and for key, value, header
   keys and header values one contiguous data buffer plus int32 start offsets, i.e. exactly
   Arrow's binary layout, so ``_columns.to_arrow`` wraps them with ``pa.Array.from_buffers``.

Batch layout (Kafka's ``DefaultRecordBatch``), big-endian: baseOffset i64 @0, batchLength i32
@8 (bytes after this field), partitionLeaderEpoch i32 @12, magic i8 @16, crc u32 @17,
attributes i16 @21 (bits 0-2 codec, bit 3 LogAppendTime, bit 4 transactional, bit 5 control),
lastOffsetDelta i32 @23, baseTimestamp i64 @27, maxTimestamp i64 @35, producerId i64 @43,
producerEpoch i16 @51, baseSequence i32 @53, recordCount i32 @57, records @61. A record is:
length, attributes (i8), timestampDelta, offsetDelta, keyLength, key, valueLength, value,
headerCount, then (keyLength, key, valueLength, value) per header, every length and delta a
zigzag varint, -1 meaning null.

Timestamps follow what Kafka clients report: CreateTime batches give ``baseTimestamp + delta``;
LogAppendTime batches give the batch's ``maxTimestamp`` for every record (the broker stamps the
batch, not the records).

Malformed input never reads out of bounds: every length is checked against its section, and
:func:`decode` returns an error code instead of raising, so the caller falls back to the
confluent-kafka path. CRCs are not verified (librdkafka's default, ``check.crcs=false``).

Compiled with ``cache=True``: the machine code is written beside this module (``__pycache__``)
on first use and loaded by later processes. Where that directory is read-only numba uses its
user-wide cache directory; if neither is writable the functions are compiled in each process
without caching (see :func:`_jit`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from spark_pipelines.datasource._columns import Columns

log = logging.getLogger(__name__)

HEADER_SIZE = 61
CODEC_MASK = 0x07
LOG_APPEND_TIME = 0x08
TRANSACTIONAL = 0x10
CONTROL = 0x20

OK = 0
MALFORMED = 1
"""Error codes :func:`decode` returns; anything but OK means: use the general path."""


def _jit(fn: Callable[..., Any]) -> Any:
    """``numba.njit(cache=True)``, or uncached where no cache directory is writable.

    numba refuses ``cache=True`` at decoration time (RuntimeError) when neither ``__pycache__``
    beside the module nor its user-wide cache directory can be written, e.g. a read-only
    install run by a user without a home directory; compiling per process still works.
    """
    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except RuntimeError as exc:
        log.debug("numba cannot cache %s (%s); compiling per process", fn.__name__, exc)
        return numba.njit(nogil=True)(fn)


@_jit
def _i16(buf: np.ndarray, pos: int) -> np.int64:
    return (np.int64(buf[pos]) << 8) | np.int64(buf[pos + 1])


@_jit
def _i32(buf: np.ndarray, pos: int) -> np.int64:
    v = (
        (np.int64(buf[pos]) << 24)
        | (np.int64(buf[pos + 1]) << 16)
        | (np.int64(buf[pos + 2]) << 8)
        | np.int64(buf[pos + 3])
    )
    return v - (np.int64(1) << 32) if v >= (np.int64(1) << 31) else v


@_jit
def _i64(buf: np.ndarray, pos: int) -> np.int64:
    hi = np.uint64(0)
    for i in range(8):
        hi = (hi << np.uint64(8)) | np.uint64(buf[pos + i])
    return np.int64(hi)


@_jit
def _varint(buf: np.ndarray, pos: int, limit: int) -> tuple[int | np.int64, int]:
    """A zigzag varint at ``pos``: (value, next position); next position -1 if malformed."""
    raw = np.uint64(0)
    shift = np.uint64(0)
    while True:
        if pos >= limit or shift > np.uint64(63):
            return 0, -1
        b = np.uint64(buf[pos])
        pos += 1
        raw |= (b & np.uint64(0x7F)) << shift
        if b < np.uint64(0x80):
            break
        shift += np.uint64(7)
    value = np.int64(raw >> np.uint64(1)) ^ -np.int64(raw & np.uint64(1))
    return value, pos


@_jit
def scan(buf: np.ndarray) -> tuple[np.ndarray, ...]:
    """Headers of the complete batches at the start of ``buf`` (a Fetch ``records`` field).

    Returns int64 arrays ``(base_offset, last_offset_delta, attributes, magic, base_ts,
    max_ts, count, records_start, batch_end)``, one entry per complete batch. A batch whose
    magic is not 2 is listed with only its offsets and magic filled in (the caller falls back
    at it); scanning stops there, and at the first truncated batch.
    """
    n = len(buf)
    cap = n // HEADER_SIZE + 1
    base = np.empty(cap, np.int64)
    last_delta = np.empty(cap, np.int64)
    attrs = np.empty(cap, np.int64)
    magic = np.empty(cap, np.int64)
    base_ts = np.empty(cap, np.int64)
    max_ts = np.empty(cap, np.int64)
    count = np.empty(cap, np.int64)
    rec_start = np.empty(cap, np.int64)
    batch_end = np.empty(cap, np.int64)
    pos = 0
    k = 0
    while pos + 17 <= n:
        length = _i32(buf, pos + 8)
        end = pos + 12 + length
        if length < 0 or end > n:
            break  # truncated at the end of the fetch (or nonsense): stop here
        base[k] = _i64(buf, pos)
        magic[k] = buf[pos + 16]
        batch_end[k] = end
        if magic[k] != 2 or end < pos + HEADER_SIZE:
            if magic[k] == 2:
                magic[k] = -1  # too short to be a batch: malformed
            last_delta[k] = 0
            attrs[k] = 0
            base_ts[k] = 0
            max_ts[k] = 0
            count[k] = 0
            rec_start[k] = end
            k += 1
            break
        attrs[k] = _i16(buf, pos + 21)
        last_delta[k] = _i32(buf, pos + 23)
        base_ts[k] = _i64(buf, pos + 27)
        max_ts[k] = _i64(buf, pos + 35)
        count[k] = _i32(buf, pos + 57)
        rec_start[k] = pos + HEADER_SIZE
        k += 1
        pos = end
    return (
        base[:k],
        last_delta[:k],
        attrs[:k],
        magic[:k],
        base_ts[:k],
        max_ts[:k],
        count[:k],
        rec_start[:k],
        batch_end[:k],
    )


@_jit
def _grow(arr: np.ndarray, need: int) -> np.ndarray:
    if need <= len(arr):
        return arr
    out = np.empty(max(need, 2 * len(arr)), arr.dtype)
    out[: len(arr)] = arr
    return out


# Columns of the per-batch table ``decode_into`` walks (one row per batch, int64).
SEC_START, SEC_END, BASE_OFFSET, BASE_TS, MAX_TS, IS_LOG_APPEND, COUNT = range(7)
# Cursor slots in ``state``: records kept, key/value bytes used, headers kept, their bytes used.
N, KEY_POS, VALUE_POS, HEADERS, HKEY_POS, HVALUE_POS = range(6)


@_jit
def decode_into(
    data: np.ndarray,
    batches: np.ndarray,
    start: int,
    end: int,
    state: np.ndarray,
    out: tuple[np.ndarray, ...],
    hdrs: tuple[np.ndarray, ...],
) -> tuple[Any, ...]:
    """Appends every record with ``start <= offset < end`` of some batches to ``out``.

    ``data`` holds the records sections of the batches described by ``batches`` (columns
    SEC_START..COUNT above: where the section lies in ``data``, base offset, base and max
    timestamp, LogAppendTime flag, record count). ``out`` is ``(offsets, timestamps,
    timestamp_types, key_offsets, key_valid, key_data, value_offsets, value_valid,
    value_data, header_offsets)``, sized by the caller for every record and byte; ``hdrs`` is
    ``(hkey_offsets, hkey_data, hvalue_offsets, hvalue_valid, hvalue_data)``, grown here as
    needed (headers are rare and unbounded in number). ``state`` holds the cursors, so several
    calls (one per decompressed section) fill one set of columns. Returns ``(error, hdrs)``.
    """
    offsets, stamps, kinds, key_off, key_valid, key_data, val_off, val_valid, val_data, hdr_off = (
        out
    )
    hkey_off, hkey_data, hval_off, hval_valid, hval_data = hdrs
    n = state[N]
    kpos = state[KEY_POS]
    vpos = state[VALUE_POS]
    h = state[HEADERS]
    hkpos = state[HKEY_POS]
    hvpos = state[HVALUE_POS]
    err = OK
    for b in range(batches.shape[0]):
        pos = batches[b, SEC_START]
        limit = batches[b, SEC_END]
        base_offset = batches[b, BASE_OFFSET]
        log_append = batches[b, IS_LOG_APPEND] != 0
        for _ in range(batches[b, COUNT]):
            length, pos = _varint(data, pos, limit)
            if pos < 0 or length < 0 or pos + length > limit:
                pos = -1
                break
            rec_end = pos + length
            pos += 1  # record attributes: unused
            ts_delta, pos = _varint(data, pos, rec_end)
            if pos < 0:
                break
            off_delta, pos = _varint(data, pos, rec_end)
            if pos < 0:
                break
            offset = base_offset + off_delta
            keep = offset >= start and offset < end
            klen, pos = _varint(data, pos, rec_end)
            if pos < 0 or pos + max(klen, 0) > rec_end:
                pos = -1
                break
            kstart = pos
            pos += max(klen, 0)
            vlen, pos = _varint(data, pos, rec_end)
            if pos < 0 or pos + max(vlen, 0) > rec_end:
                pos = -1
                break
            vstart = pos
            pos += max(vlen, 0)
            nh, pos = _varint(data, pos, rec_end)
            if pos < 0 or nh < 0:
                pos = -1
                break
            if keep:
                offsets[n] = offset
                if log_append:
                    stamps[n] = batches[b, MAX_TS]
                    kinds[n] = 1
                else:
                    stamps[n] = batches[b, BASE_TS] + ts_delta
                    kinds[n] = 0
                key_valid[n] = klen >= 0
                if klen > 0:
                    key_data[kpos : kpos + klen] = data[kstart : kstart + klen]
                    kpos += klen
                key_off[n + 1] = kpos
                val_valid[n] = vlen >= 0
                if vlen > 0:
                    val_data[vpos : vpos + vlen] = data[vstart : vstart + vlen]
                    vpos += vlen
                val_off[n + 1] = vpos
            for _h in range(nh):
                hk, pos = _varint(data, pos, rec_end)
                if pos < 0 or hk < 0 or pos + hk > rec_end:
                    pos = -1
                    break
                hkstart = pos
                pos += hk
                hv, pos = _varint(data, pos, rec_end)
                if pos < 0 or pos + max(hv, 0) > rec_end:
                    pos = -1
                    break
                hvstart = pos
                pos += max(hv, 0)
                if keep:
                    hkey_off = _grow(hkey_off, h + 2)
                    hval_off = _grow(hval_off, h + 2)
                    hval_valid = _grow(hval_valid, h + 1)
                    hkey_data = _grow(hkey_data, hkpos + hk)
                    hkey_data[hkpos : hkpos + hk] = data[hkstart : hkstart + hk]
                    hkpos += hk
                    hkey_off[h + 1] = hkpos
                    hval_valid[h] = hv >= 0
                    if hv > 0:
                        hval_data = _grow(hval_data, hvpos + hv)
                        hval_data[hvpos : hvpos + hv] = data[hvstart : hvstart + hv]
                        hvpos += hv
                    hval_off[h + 1] = hvpos
                    h += 1
            if pos < 0:
                break
            if keep:
                hdr_off[n + 1] = h
                n += 1
            pos = rec_end
        if pos < 0:
            err = MALFORMED
            break
    state[N] = n
    state[KEY_POS] = kpos
    state[VALUE_POS] = vpos
    state[HEADERS] = h
    state[HKEY_POS] = hkpos
    state[HVALUE_POS] = hvpos
    return err, (hkey_off, hkey_data, hval_off, hval_valid, hval_data)


def _offsets(n: int) -> np.ndarray:
    out = np.empty(n + 1, np.int32)
    out[0] = 0
    return out


def decode(segments: list[tuple[np.ndarray, np.ndarray]], start: int, end: int) -> Columns | None:
    """The records of ``segments`` (each ``(data, batches)`` as :func:`decode_into` takes them)
    with ``start <= offset < end``, in segment order; None if any batch is malformed.

    Output buffers are sized for the worst case (every record kept, all bytes keys or values)
    and sliced afterwards; the untouched tail costs address space, not memory.
    """
    records = sum(int(b[:, COUNT].clip(0).sum()) for _, b in segments)
    size = sum(len(d) for d, _ in segments)
    out = (
        np.empty(records, np.int64),
        np.empty(records, np.int64),
        np.empty(records, np.int32),
        _offsets(records),
        np.empty(records, np.bool_),
        np.empty(size, np.uint8),
        _offsets(records),
        np.empty(records, np.bool_),
        np.empty(size, np.uint8),
        _offsets(records),
    )
    hdrs = (
        np.zeros(64, np.int32),
        np.empty(256, np.uint8),
        np.zeros(64, np.int32),
        np.empty(64, np.bool_),
        np.empty(256, np.uint8),
    )
    state = np.zeros(6, np.int64)
    for data, batches in segments:
        err, hdrs = decode_into(data, batches, start, end, state, out, hdrs)
        if err != OK:
            return None
    n, h = int(state[N]), int(state[HEADERS])
    offsets, stamps, kinds, key_off, key_valid, key_data, val_off, val_valid, val_data, hdr_off = (
        out
    )
    hkey_off, hkey_data, hval_off, hval_valid, hval_data = hdrs
    return Columns(
        offsets=offsets[:n],
        timestamps=stamps[:n],
        timestamp_types=kinds[:n],
        key_offsets=key_off[: n + 1],
        key_valid=key_valid[:n],
        key_data=key_data[: state[KEY_POS]],
        value_offsets=val_off[: n + 1],
        value_valid=val_valid[:n],
        value_data=val_data[: state[VALUE_POS]],
        header_offsets=hdr_off[: n + 1],
        hkey_offsets=hkey_off[: h + 1],
        hkey_data=hkey_data[: state[HKEY_POS]],
        hvalue_offsets=hval_off[: h + 1],
        hvalue_valid=hval_valid[:h],
        hvalue_data=hval_data[: state[HVALUE_POS]],
    )
