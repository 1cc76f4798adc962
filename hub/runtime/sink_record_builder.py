"""``SinkRecordBuilder``: one consume's messages -> converters -> transforms -> what ``put`` gets.

The one component that turns consumed messages into a sink task's input, so the task class
keeps only its lifecycle, the consumer, assignments, pauses and offset commits.

- With no transform configured, a poll's messages become a lazy ``SinkRecordBatch``
  (hub.api.sink): the records are built only if the task looks at them, and a task that
  writes the consumed bytes reads them as columns. The columns and the per-partition offsets
  come from C-level maps over the messages (no Python frame per message); anything unusual in
  a poll (an error message, a partition no longer assigned, a topic seen for the first time)
  takes the record-by-record path instead.
- Record by record (``records``): the converters called directly, a converter whose raw form
  is text or bytes inlined (``RawForm``: no call at all), header values converted once per
  (key, bytes) when the header converter's raw form is pure text and decimal integers parsed
  here when it says they read back as ints (``HeaderRawForm``). A message whose conversion
  raises (or every message, when transforms are configured) goes through ``convert``, which
  applies the connector's error policy. Converters are pure, so converting again is harmless.

Only the converters' declared raw forms decide the shortcuts; no converter class is special.
Not thread-safe: the task's thread only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from confluent_kafka import Message

from hub.api import ConnectError, Header, SinkRecord, TimestampType, record_factory
from hub.api.schema import (
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
)
from hub.api.sink import SinkRecordBatch
from hub.runtime.error_handling import RetryWithToleranceOperator
from hub.runtime.plugin_setup import Chain, IdentityChain, RecordConverters

log = logging.getLogger(__name__)

_TIMESTAMP_TYPES = {0: TimestampType.NO_TIMESTAMP, 1: TimestampType.CREATE_TIME,
                    2: TimestampType.LOG_APPEND_TIME}  # fmt: skip
# Header values safe to share between records (a cached Header is handed out many times).
_IMMUTABLE = frozenset({str, int, float, bool, type(None), bytes, Decimal})
_HEADER_CACHE_MAX = 4096

new_sink_record: Callable[..., SinkRecord] = record_factory(
    SinkRecord,
    ("topic", "partition", "key", "value", "key_schema", "value_schema", "timestamp",
     "headers", "offset", "timestamp_type"),
)  # fmt: skip
"""``SinkRecord(...)`` from its ten fields, positionally (equal to the constructor's)."""
new_header: Callable[[str, Any, Any], Header] = record_factory(Header, ("key", "value", "schema"))

# How the hot path reads a key or value: call the converter, decode text, or keep the bytes.
_PLAIN, _TEXT, _RAW = 0, 1, 2


def _decoding(converter: Any) -> tuple[int, Any, str]:
    """(how, schema, encoding) from the converter's declared raw form."""
    form = converter.raw_form()
    if form.kind == "text":
        return _TEXT, OPTIONAL_STRING_SCHEMA, form.encoding
    if form.kind == "bytes":
        return _RAW, OPTIONAL_BYTES_SCHEMA, ""
    return _PLAIN, None, ""


class SinkRecordBuilder:
    """Builds ``put``'s input for one sink task; holds its converters, chain and error policy."""

    def __init__(
        self,
        *,
        converters: RecordConverters,
        chain: Chain,
        errors: RetryWithToleranceOperator,
        assigned: set[tuple[str, int]],
        on_new_topic: Callable[[str], None],
        log_extra: dict[str, Any],
    ) -> None:
        """``assigned`` is the task's live set of assigned (topic, partition) pairs (read,
        never changed here); ``on_new_topic(topic)`` is called on a topic's first record."""
        self.converters = converters
        self.chain = chain
        self.errors = errors
        self.assigned = assigned
        self.on_new_topic = on_new_topic
        self.log_extra = log_extra
        self.topics_seen: set[str] = set()
        self.identity = isinstance(chain, IdentityChain)
        self.key_form = converters.key.raw_form()
        self.value_form = converters.value.raw_form()
        header_form = converters.header.raw_form()
        pure = header_form.text
        self._header_cache: dict[tuple[str, bytes | None], Header] | None = {} if pure else None
        self._int_headers = pure and header_form.integers
        # A pure text header converter never fails: a sink may read raw header bytes and
        # convert only the ones it needs.
        self._convert_header = self.header_value if pure else None

    def batch(
        self, messages: list[Message], offsets: dict[tuple[str, int], int]
    ) -> list[SinkRecord] | SinkRecordBatch:
        """What ``put`` gets for one consume; ``offsets`` gets each partition's next offset.

        A lazy ``SinkRecordBatch`` when every message is a record of an assigned partition of
        a topic already seen and no transform is configured; else the records (``records``).
        """
        if not messages or not self.identity or any(map(Message.error, messages)):
            return self.records(messages, offsets)
        topics: list[str] = list(map(Message.topic, messages))  # type: ignore[arg-type]
        partitions: list[int] = list(map(Message.partition, messages))  # type: ignore[arg-type]
        first = (topics[0], partitions[0])
        if len(set(partitions)) == 1 and len(set(topics)) == 1:
            keys = None  # one partition: no per-message tuples
            if first not in self.assigned or first[0] not in self.topics_seen:
                return self.records(messages, offsets)
        else:
            keys = list(zip(topics, partitions, strict=True))
            if not (self.assigned.issuperset(keys) and self.topics_seen.issuperset(topics)):
                return self.records(messages, offsets)
        numbers: list[int] = list(map(Message.offset, messages))  # type: ignore[arg-type]
        if keys is None:
            offsets[first] = numbers[-1] + 1
        else:  # the last message of each partition gives its next offset, as records does
            offsets.update(zip(keys, map((1).__add__, numbers), strict=True))
        return SinkRecordBatch(
            messages,
            topics,
            partitions,
            numbers,
            build=lambda: self.records(messages, {}),
            key_conversion=self.key_form,
            value_conversion=self.value_form,
            convert_header=self._convert_header,
        )

    def header_value(self, topic: str, key: str, data: bytes | None) -> Any:
        return self.converters.header.to_connect(topic, key, data).value

    def records(
        self, messages: list[Message], offsets: dict[tuple[str, int], int]
    ) -> list[SinkRecord]:
        """The records for ``put`` from one consume; ``offsets`` gets each partition's next."""
        batch: list[SinkRecord] = []
        append, assigned = batch.append, self.assigned
        conv = self.converters
        key_to, value_to, headers_of = conv.key.to_connect, conv.value.to_connect, self.headers
        fast, seen, types = self.identity, self.topics_seen, _TIMESTAMP_TYPES
        key_kind, key_schema, key_encoding = _decoding(conv.key)
        value_kind, value_schema, value_encoding = _decoding(conv.value)
        key: Any
        value: Any
        for msg in messages:
            if msg.error() is not None:
                self._on_consume_error(msg)
                continue
            topic: str = msg.topic()  # type: ignore[assignment]
            partition: int = msg.partition()  # type: ignore[assignment]
            tp = (topic, partition)
            if tp not in assigned:
                continue
            offset: int = msg.offset()  # type: ignore[assignment]
            offsets[tp] = offset + 1
            if fast and topic in seen:
                try:
                    data = msg.key()
                    if key_kind == _TEXT:
                        key = None if data is None else data.decode(key_encoding)
                    elif key_kind == _RAW:
                        key = data
                    else:
                        converted = key_to(topic, data)
                        key, key_schema = converted.value, converted.schema
                    data = msg.value()
                    if value_kind == _TEXT:
                        value = None if data is None else data.decode(value_encoding)
                    elif value_kind == _RAW:
                        value = data
                    else:
                        converted = value_to(topic, data)
                        value, value_schema = converted.value, converted.schema
                    raw_headers = msg.headers()
                    headers = headers_of(topic, raw_headers) if raw_headers else ()  # type: ignore[arg-type]
                except Exception:
                    pass
                else:
                    ts_type, ts = msg.timestamp()
                    append(
                        new_sink_record(
                            topic, partition, key, value, key_schema, value_schema,
                            ts if ts_type else None, headers, offset,
                            types.get(ts_type, TimestampType.NO_TIMESTAMP),
                        )
                    )  # fmt: skip
                    continue
            record = self.convert(msg)
            if record is not None:
                append(record)
        return batch

    def _on_consume_error(self, msg: Message) -> None:
        err = msg.error()
        if err is not None and err.fatal():
            raise ConnectError(f"consumer failed: {err}")
        log.warning("consume error", extra={**self.log_extra, "error": str(err)})

    def convert(self, msg: Message) -> SinkRecord | None:
        """The record for ``put``, or None if a tolerated failure or a transform dropped it."""
        conv, run = self.converters, self.errors.run
        topic: str = msg.topic()  # type: ignore[assignment]
        ok, key = run("KEY_CONVERTER", conv.key, conv.key.to_connect, topic, msg.key(), raw=msg)
        if not ok:
            return None
        value_conv = conv.value
        ok, value = run(
            "VALUE_CONVERTER", value_conv, value_conv.to_connect, topic, msg.value(), raw=msg
        )
        if not ok:
            return None
        headers: tuple[Header, ...] | None = ()
        if raw_headers := msg.headers():
            ok, headers = run(
                "HEADER_CONVERTER", conv.header, self.headers, topic, raw_headers, raw=msg
            )
            if not ok:
                return None
        assert key is not None and value is not None
        ts_type, ts = msg.timestamp()
        record = new_sink_record(
            topic,
            msg.partition(),
            key.value,
            value.value,
            key.schema,
            value.schema,
            ts if ts_type else None,
            headers or (),
            msg.offset(),
            _TIMESTAMP_TYPES.get(ts_type, TimestampType.NO_TIMESTAMP),
        )
        if topic not in self.topics_seen:
            self.on_new_topic(topic)
            self.topics_seen.add(topic)
        if self.identity:
            return record
        ok, out = run("TRANSFORMATION", self.chain, self.chain.apply, record, raw=msg)
        return out if ok else None

    def headers(self, topic: str, raw: list[tuple[str, bytes | None]]) -> tuple[Header, ...]:
        to_connect = self.converters.header.to_connect
        cache = self._header_cache
        if cache is None:  # a converter that may depend on the topic or keep state
            out = []
            for key, data in raw:
                sv = to_connect(topic, key, data)
                out.append(Header(key, sv.value, sv.schema))
            return tuple(out)
        # A pure converter is a function of (key, bytes): repeated headers (a file name, a
        # source id) are converted once; decimal integers (sequence numbers, positions) are
        # parsed here by the rule its raw form states, without its text round trip.
        digits = self._int_headers
        out_: list[Header] = []
        append = out_.append
        for key, data in raw:
            if digits and type(data) is bytes and data.isdigit() and len(data) < 19:
                # the narrowest integer schema that holds it (non-negative: digits only)
                number = int(data)
                schema = (
                    INT8_SCHEMA if number < 0x80 else INT16_SCHEMA if number < 0x8000
                    else INT32_SCHEMA if number < 0x80000000 else INT64_SCHEMA
                )  # fmt: skip
                append(new_header(key, number, schema))
                continue
            header = cache.get((key, data))
            if header is None:
                sv = to_connect(topic, key, data)
                header = new_header(key, sv.value, sv.schema)
                if type(sv.value) in _IMMUTABLE:
                    if len(cache) >= _HEADER_CACHE_MAX:
                        cache.clear()
                    cache[(key, data)] = header
            append(header)
        return tuple(out_)
