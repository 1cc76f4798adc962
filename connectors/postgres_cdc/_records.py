"""SourceRecords built without the dataclass ``__init__``: one per row change is the hot path.

``SourceRecord`` is a frozen, slotted dataclass; its generated ``__init__`` assigns ten fields
through ``object.__setattr__`` (~2-4 us, as much as decoding the change). ``make_record``
fills the slots through their member descriptors instead. The result is indistinguishable
from a normally built record (it compares equal). At import we check that the dataclass still
has exactly the expected fields and no ``__post_init__``; if not, ``make_record`` is the plain
constructor, so a change in ``hub.api`` costs speed, never correctness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hub.api import Schema, SourceRecord
from hub.api.slots import slot_setters

_FIELDS = (
    "topic", "partition", "key", "value", "key_schema", "value_schema", "timestamp", "headers",
    "source_partition", "source_offset",
)  # fmt: skip


def _constructor(
    topic: str,
    key: Any,
    key_schema: Schema | None,
    value: Any,
    value_schema: Schema | None,
    source_partition: Mapping[str, Any],
    source_offset: Mapping[str, Any],
) -> SourceRecord:
    return SourceRecord(
        topic=topic, key=key, key_schema=key_schema, value=value, value_schema=value_schema,
        source_partition=source_partition, source_offset=source_offset,
    )  # fmt: skip


def _slot_filler() -> Callable[..., SourceRecord] | None:
    setters = slot_setters(SourceRecord, _FIELDS)
    if setters is None:
        return None
    (set_topic, set_partition, set_key, set_value, set_kschema, set_vschema, set_ts,
     set_headers, set_spart, set_soff) = setters  # fmt: skip
    new = object.__new__

    def make(
        topic: str,
        key: Any,
        key_schema: Schema | None,
        value: Any,
        value_schema: Schema | None,
        source_partition: Mapping[str, Any],
        source_offset: Mapping[str, Any],
    ) -> SourceRecord:
        record = new(SourceRecord)
        set_topic(record, topic)
        set_partition(record, None)
        set_key(record, key)
        set_value(record, value)
        set_kschema(record, key_schema)
        set_vschema(record, value_schema)
        set_ts(record, None)
        set_headers(record, ())
        set_spart(record, source_partition)
        set_soff(record, source_offset)
        return record

    return make


make_record: Callable[..., SourceRecord] = _slot_filler() or _constructor
"""(topic, key, key_schema, value, value_schema, source_partition, source_offset) -> record
with no partition, timestamp or headers."""
