"""Building many SourceRecords fast: one per log line is the source's hot path.

``SourceRecord`` is a frozen, slotted dataclass; its generated ``__init__`` sets ten fields
through ``object.__setattr__`` and costs ~4 µs, which alone caps a task near 250k lines/s.
``RecordFactory`` fills the slots directly through the setters ``hub.api.slots`` hands out
(~1.5 µs), and falls back to the constructor if the dataclass changed shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hub.api import Header, Schema, SourceRecord, Type
from hub.api.slots import slot_setters

STRING_SCHEMA = Schema(Type.STRING)

_FIELDS = ("topic", "partition", "key", "value", "key_schema", "value_schema", "timestamp",
           "headers", "source_partition", "source_offset")  # fmt: skip
_SETTERS = (
    dict(zip(_FIELDS, setters, strict=True))
    if (setters := slot_setters(SourceRecord, _FIELDS)) is not None
    else None
)
_HEADER_SETTERS = slot_setters(Header, ("key", "value", "schema"))


def make_header(key: str, value: Any) -> Header:
    """A schemaless Header, built without the dataclass ``__init__`` when possible."""
    if _HEADER_SETTERS is None:
        return Header(key, value)
    header = object.__new__(Header)
    set_key, set_value, set_schema = _HEADER_SETTERS
    set_key(header, key)
    set_value(header, value)
    set_schema(header, None)
    return header


class RecordFactory:
    """Makes string-valued records for one topic and one source partition (one file)."""

    def __init__(self, topic: str, source_partition: Mapping[str, Any]) -> None:
        self.topic = topic
        self.source_partition = source_partition

    def make(
        self, value: str, headers: tuple[Header, ...], source_offset: Mapping[str, Any]
    ) -> SourceRecord:
        if _SETTERS is None:
            return SourceRecord(
                topic=self.topic,
                value=value,
                value_schema=STRING_SCHEMA,
                headers=headers,
                source_partition=self.source_partition,
                source_offset=source_offset,
            )
        s = _SETTERS
        record = object.__new__(SourceRecord)
        s["topic"](record, self.topic)
        s["partition"](record, None)
        s["key"](record, None)
        s["value"](record, value)
        s["key_schema"](record, None)
        s["value_schema"](record, STRING_SCHEMA)
        s["timestamp"](record, None)
        s["headers"](record, headers)
        s["source_partition"](record, self.source_partition)
        s["source_offset"](record, source_offset)
        return record

    def extend_lines(
        self,
        out: list[SourceRecord],
        lines: list[bytes],
        span: tuple[int, int],
        position: int,
        seq: int,
        encoding: str,
        static_headers: tuple[Header, ...],
        identity: Mapping[str, Any],
        seq_header: bool,
    ) -> tuple[int, int]:
        """Appends one record per ``lines[span[0]:span[1]]`` (read from byte ``position``
        onwards, newline stripped; numbered from ``seq + 1``); returns the position after the
        last one and its sequence number.

        The hot loop of the source: everything it touches is a local name."""
        start, stop = span
        if _SETTERS is None or _HEADER_SETTERS is None:
            for raw in lines[start:stop]:
                end = position + len(raw) + 1
                seq += 1
                text = raw.removesuffix(b"\r").decode(encoding, "replace")
                headers = (*static_headers, make_header("file.offset", position))
                if seq_header:
                    headers = (*headers, make_header("file.seq", seq))
                out.append(self.make(text, headers, {**identity, "position": end, "seq": seq}))
                position = end
            return position, seq
        s = _SETTERS
        set_topic, set_partition, set_key, set_value = (
            s["topic"], s["partition"], s["key"], s["value"]
        )  # fmt: skip
        set_kschema, set_vschema, set_ts, set_headers = (
            s["key_schema"], s["value_schema"], s["timestamp"], s["headers"]
        )  # fmt: skip
        set_spart, set_soff = s["source_partition"], s["source_offset"]
        set_hkey, set_hvalue, set_hschema = _HEADER_SETTERS
        topic, spart, schema, new, append = (
            self.topic, self.source_partition, STRING_SCHEMA, object.__new__, out.append
        )  # fmt: skip
        ino, dev, stream = identity["inode"], identity["device"], identity["stream"]
        fp, fp_len = identity["fingerprint"], identity["fingerprint_bytes"]
        pending = identity["pending"]
        for raw in lines[start:stop]:
            end = position + len(raw) + 1
            seq += 1
            header = new(Header)
            set_hkey(header, "file.offset")
            set_hvalue(header, position)
            set_hschema(header, None)
            if seq_header:
                seq_h = new(Header)
                set_hkey(seq_h, "file.seq")
                set_hvalue(seq_h, seq)
                set_hschema(seq_h, None)
                headers = (*static_headers, header, seq_h)
            else:
                headers = (*static_headers, header)
            record = new(SourceRecord)
            set_topic(record, topic)
            set_partition(record, None)
            set_key(record, None)
            set_value(record, raw.removesuffix(b"\r").decode(encoding, "replace"))
            set_kschema(record, None)
            set_vschema(record, schema)
            set_ts(record, None)
            set_headers(record, headers)
            set_spart(record, spart)
            set_soff(
                record,
                {
                    "position": end,
                    "inode": ino,
                    "device": dev,
                    "fingerprint": fp,
                    "fingerprint_bytes": fp_len,
                    "stream": stream,
                    "seq": seq,
                    "pending": pending,
                },
            )
            append(record)
            position = end
        return position, seq
