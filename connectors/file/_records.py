"""Building the source's records fast: one per log line is the source's hot path.

Lines become a ``SourceRecordBatch`` (``RecordFactory.line_batch``): columns built with a few
C-level passes over the lines, no object per line; the worker produces them as they are, or
materialises records where it needs them. A ``SourceRecord`` is built only for what is not a
plain line (a multiline event, an unterminated last line): its frozen dataclass ``__init__``
costs ~4 µs, so ``RecordFactory.make`` uses ``hub.api.record_factory`` (the contract's
positional builder, equal to the constructor).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import accumulate, repeat
from typing import Any

from hub.api import Header, Schema, SourceRecord, SourceRecordBatch, Type, record_factory
from hub.api.source import as_records

STRING_SCHEMA = Schema(Type.STRING)

_make_header = record_factory(Header, ("key", "value"), schema=None)


def make_header(key: str, value: Any) -> Header:
    """A schemaless Header (``Header(key, value)``, built the fast way)."""
    return _make_header(key, value)


class RecordFactory:
    """Makes string-valued records for one topic and one source partition (one file)."""

    def __init__(self, topic: str, source_partition: Mapping[str, Any]) -> None:
        self.topic = topic
        self.source_partition = source_partition
        self._make = record_factory(
            SourceRecord,
            ("value", "headers", "source_offset"),
            topic=topic,
            value_schema=STRING_SCHEMA,
            source_partition=source_partition,
            partition=None,
            key=None,
            key_schema=None,
            timestamp=None,
        )

    def make(
        self, value: str, headers: tuple[Header, ...], source_offset: Mapping[str, Any]
    ) -> SourceRecord:
        return self._make(value, headers, source_offset)

    def line_batch(
        self,
        lines: list[bytes],
        span: tuple[int, int],
        position: int,
        seq: int,
        encoding: str,
        static_headers: tuple[Header, ...],
        identity: Mapping[str, Any],
        seq_header: bool,
    ) -> tuple[SourceRecordBatch, int, int]:
        """One record per ``lines[span[0]:span[1]]`` (read from byte ``position`` onwards,
        newline stripped; numbered from ``seq + 1``), as a ``SourceRecordBatch``: the raw
        bytes (a trailing ``\r`` dropped) are the values, decoded only if the worker needs
        records. Each record's ``file.offset`` header is its first byte, its offset
        ``{**identity, "position": byte after its newline, "seq": its number}``. Returns the
        batch, the position after its last line and that line's number.

        Every step is one C-level pass over the lines: no Python code runs per line."""
        start, stop = span
        chunk = lines[start:stop]
        # starts[i] is line i's first byte, starts[i + 1] the byte after its newline
        starts = list(accumulate(map(_PLUS_ONE, map(len, chunk)), initial=position))
        seqs = range(seq + 1, seq + len(chunk) + 1)
        header_columns: list[tuple[str, Sequence[Any]]] = [("file.offset", starts[:-1])]
        if seq_header:
            header_columns.append(("file.seq", seqs))
        batch = SourceRecordBatch(
            self.topic,
            self.source_partition,
            list(map(bytes.removesuffix, chunk, repeat(b"\r"))),
            encoding=encoding,
            value_schema=STRING_SCHEMA,
            headers=static_headers,
            header_columns=header_columns,
            offset=identity,
            offset_columns={"position": starts[1:], "seq": seqs},
        )
        return batch, starts[-1], seqs.stop - 1


_PLUS_ONE = (1).__add__


def _concat(a: Sequence[Any], b: Sequence[Any]) -> Sequence[Any]:
    """Two columns as one (adjacent ranges stay a range)."""
    if type(a) is range and type(b) is range and a.step == b.step == 1 and a.stop == b.start:
        return range(a.start, b.stop)
    return [*a, *b]


class Emitted:
    """What one ``poll`` emitted, in order: line batches and single records (multiline events,
    an unterminated last line). ``len()`` counts records (``batch.size`` caps it).

    A batch that follows one with the same shared parts (file, identity, headers: the next
    lines of the same file, read from the next chunk) is merged into it, so a poll that
    crosses a read chunk still returns one batch. Merging is concatenating the columns, so
    the merged batch's records are exactly the two batches' records."""

    __slots__ = ("count", "parts")

    def __init__(self) -> None:
        self.parts: list[SourceRecord | SourceRecordBatch] = []
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def append(self, record: SourceRecord) -> None:
        self.parts.append(record)
        self.count += 1

    def add(self, batch: SourceRecordBatch) -> None:
        self.count += len(batch)
        prev = self.parts[-1] if self.parts else None
        if (
            type(prev) is SourceRecordBatch
            and prev.topic == batch.topic
            and prev.source_partition == batch.source_partition
            and prev.offset == batch.offset  # a new dict per chunk read, often equal
            and prev.headers == batch.headers
            and prev.encoding == batch.encoding
            and prev.value_schema == batch.value_schema
            and [k for k, _ in prev.header_columns] == [k for k, _ in batch.header_columns]
            and prev.offset_columns.keys() == batch.offset_columns.keys()
        ):
            self.parts[-1] = SourceRecordBatch(
                prev.topic,
                prev.source_partition,
                [*prev.values, *batch.values],
                encoding=prev.encoding,
                value_schema=prev.value_schema,
                headers=prev.headers,
                header_columns=[
                    (k, _concat(a, b))
                    for (k, a), (_, b) in zip(
                        prev.header_columns, batch.header_columns, strict=True
                    )
                ],
                offset=prev.offset,
                offset_columns={
                    k: _concat(c, batch.offset_columns[k]) for k, c in prev.offset_columns.items()
                },
            )
            return
        self.parts.append(batch)

    def result(self) -> SourceRecordBatch | list[SourceRecord] | None:
        """The poll result: the batch when the poll emitted one batch (the common case), else
        the records in order (a flat list, as before batches existed); None when empty."""
        if not self.count:
            return None
        if len(self.parts) == 1 and type(self.parts[0]) is SourceRecordBatch:
            return self.parts[0]
        return as_records(self.parts)
