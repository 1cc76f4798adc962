"""Producing a ``SourceRecordBatch`` straight from its columns (the source's columnar path).

A batch of many small records (log lines) is produced without a record object per line when
the result is provably the same as converting each record: the value converter's raw form says
the values already are the bytes it would produce (``RawForm`` ``text`` in the batch's
encoding, or ``bytes``), the key converter converts each key once per key, and the shared
headers are converted once. Header columns of ints or strings take the header converter's
raw form (``HeaderRawForm.text``) when it declares one. Anything else returns None from
``columns`` and the caller turns the batch into records, so both ways give the same bytes.

The produce loop is ``map`` over ``Producer.produce`` with the columns as iterators (the loop
runs in C); a full producer queue (``BufferError``) resumes at the record it stopped at.
"""

from __future__ import annotations

import codecs
import functools
import threading
from collections import deque
from collections.abc import Callable
from itertools import repeat
from operator import length_hint
from typing import Any

from confluent_kafka import KafkaException

from hub.api import Converter, HeaderConverter, RawForm, SourceRecordBatch
from hub.api.schema import Type

# Codecs in which bytes that decode without error encode back to the very same bytes, and in
# which an ASCII separator cannot be part of a multi-byte character (so validating the values
# joined by b"\n" validates each of them).
_SAME_BYTES_CODECS = frozenset({"utf-8", "ascii", "iso8859-1"})
_BYTES = frozenset({bytes})
_BYTES_OR_NONE = frozenset({bytes, type(None)})

Columns = tuple[list[Any], list[Any] | None, Any]
"""(values, keys or None, per-record headers: a ``repeat`` or a list) as ``produce`` takes them."""


@functools.lru_cache(maxsize=64)
def _codec(name: str) -> str | None:
    """The canonical name of an encoding (``"UTF-8"`` and ``"utf8"`` are one codec)."""
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def columns(
    item: SourceRecordBatch,
    key: Converter,
    value_form: RawForm,
    header: HeaderConverter,
    text_headers: bool,
) -> Columns | None:
    """The batch's produce arguments, or None when it must go through records."""
    values = column_values(item, value_form)
    if values is None:
        return None
    try:
        keys = None
        if item.keys is not None:
            keys = raw_keys(item, key.raw_form())
        if item.keys is not None and keys is None:
            key_from, topic, schema = key.from_connect, item.topic, item.key_schema
            keys = [key_from(topic, schema, k) for k in item.keys]
        headers = column_headers(item, header, text_headers)
    except Exception:
        return None
    return values, keys, headers


def raw_keys(item: SourceRecordBatch, form: RawForm) -> list[Any] | None:
    """The keys as they are, when the key converter's raw form says it would return each
    unchanged (``bytes``, and None for a null-safe one); None when they must be converted."""
    keys = item.keys
    if keys is None or form.kind != "bytes":
        return None
    schema = item.key_schema
    if schema is not None and schema.type is not Type.BYTES:
        return None
    if not set(map(type, keys)) <= (_BYTES_OR_NONE if form.null_safe else _BYTES):
        return None
    return keys if type(keys) is list else list(keys)


def column_values(item: SourceRecordBatch, form: RawForm) -> list[Any] | None:
    """The converted values, when the converter's raw form says what they are without
    calling it per record; None otherwise (or when a value would not convert)."""
    values = item.values
    kinds = set(map(type, values))
    if form.kind == "text":
        if kinds == {str}:
            try:
                return list(map(str.encode, values, repeat(form.encoding)))
            except UnicodeError:
                return None
        if kinds != {bytes}:
            return None
        if item.encoding is not None:
            # Records would carry ``value.decode(encoding, "replace")``, which the
            # converter encodes again: the same bytes exactly when they are valid.
            codec = _codec(item.encoding)
            if codec != _codec(form.encoding) or codec not in _SAME_BYTES_CODECS:
                return None
            joined = b"\n".join(values)
            if codec != "iso8859-1" and not joined.isascii():
                try:
                    joined.decode(codec)
                except UnicodeDecodeError:
                    return None
        # (a text converter sends bytes values as they are)
        return values if type(values) is list else list(values)
    if form.kind == "bytes":
        schema = item.value_schema
        allowed = _BYTES_OR_NONE if form.null_safe else _BYTES  # (tombstones stay None)
        if item.encoding is not None or not kinds <= allowed:
            return None
        if schema is not None and schema.type is not Type.BYTES:
            return None
        return values if type(values) is list else list(values)
    return None


def column_headers(item: SourceRecordBatch, header: HeaderConverter, text: bool) -> Any:
    """Each record's headers for ``produce``: ``repeat(...)`` when they are all the same,
    else a list. A dict where the keys are distinct (the producer takes one faster than
    a list of pairs; it writes the same headers in the same order)."""
    from_connect = header.from_connect
    topic = item.topic
    shared = [(h.key, from_connect(topic, h.key, h.schema, h.value)) for h in item.headers]
    names = [k for k, _ in shared] + [k for k, _ in item.header_columns]
    if not names:
        return repeat(None)
    unique = len(set(names)) == len(names)
    if not item.header_columns:
        return repeat(dict(shared) if unique else shared)
    converted: list[list[Any]] = []
    for key, column in item.header_columns:
        kinds = {int} if type(column) is range else set(map(type, column))
        if text and kinds == {int}:
            converted.append(list(map(b"%d".__mod__, column)))
        elif text and kinds == {str}:
            converted.append(list(map(str.encode, column)))
        else:
            converted.append([from_connect(topic, key, None, v) for v in column])
    keys = [k for k, _ in item.header_columns]
    if not unique:
        pairs = [list(zip(repeat(k), c, strict=True)) for k, c in zip(keys, converted, strict=True)]
        return [[*shared, *row] for row in zip(*pairs, strict=True)]
    const = dict(shared)
    if len(converted) == 1:
        (k0,), (c0,) = keys, converted
        return [{**const, k0: a} for a in c0]
    if len(converted) == 2:
        (k0, k1), (c0, c1) = keys, converted
        return [{**const, k0: a, k1: b} for a, b in zip(c0, c1, strict=True)]
    return [{**const, **dict(zip(keys, row, strict=True))} for row in zip(*converted, strict=True)]


def produce_columns(
    produce: Callable[..., None],
    item: SourceRecordBatch,
    data: Columns,
    on_delivery: Callable[[Any, Any], None],
    stopping: threading.Event,
    retry: Callable[[KafkaException, str], bool] | None = None,
) -> None:
    """Hands every record of ``item`` to ``produce``, waiting while the queue is full.
    ``retry(error, topic)``: whether to try a record that raised ``error`` again (after
    doing what may help); without it such an error propagates."""
    values, keys, headers = data
    n = len(values)
    topic = item.topic
    partition = -1 if item.partition is None else item.partition  # -1: the partitioner
    stamps = item.timestamps
    stamp_list = None
    if stamps is not None:  # 0: "now" for the producer
        stamp_list = [0 if t is None else t for t in stamps] if None in stamps else stamps
    # produce(topic, value, key, partition, callback, on_delivery, timestamp, headers),
    # positionally, mapped over the columns: the per-record loop runs in C. (``callback``
    # is the delivery callback's primary name: a None there would hide ``on_delivery``.)
    value_it = iter(values)
    args = (
        repeat(topic),
        value_it,
        repeat(None) if keys is None else iter(keys),
        repeat(partition),
        repeat(on_delivery),
        repeat(None),
        repeat(0) if stamp_list is None else iter(stamp_list),
        headers if type(headers) is repeat else iter(headers),
    )
    while True:
        try:
            deque(map(produce, *args), 0)
            return
        except (BufferError, KafkaException) as exc:
            # The producer's queue is full (the worker's poll thread drains it), or a
            # partition it does not know yet (``retry`` refreshes its metadata, or says to
            # give up). Record ``i`` was taken from every column but not produced; the
            # rest follow it.
            if isinstance(exc, KafkaException) and (retry is None or not retry(exc, topic)):
                raise
            i = n - length_hint(value_it) - 1
            row = (
                topic, values[i], None if keys is None else keys[i], partition,
                on_delivery, None, 0 if stamp_list is None else stamp_list[i],
                next(iter(headers)) if type(headers) is repeat else headers[i],
            )  # fmt: skip
            while True:
                stopping.wait(0.005)
                try:
                    produce(*row)
                    break
                except BufferError:
                    continue
                except KafkaException as again:
                    if retry is None or not retry(again, topic):
                        raise
