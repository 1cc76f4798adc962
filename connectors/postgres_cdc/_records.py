"""SourceRecords built without the dataclass ``__init__``: one per row change is the hot path.

``SourceRecord`` is a frozen, slotted dataclass; its generated ``__init__`` assigns ten fields
through ``object.__setattr__`` (~2-4 us, as much as decoding the change). ``make_record`` is
``hub.api.record_factory``'s positional builder instead: equal to the constructor's record,
about a third of its cost.
"""

from __future__ import annotations

from collections.abc import Callable

from hub.api import SourceRecord, record_factory

make_record: Callable[..., SourceRecord] = record_factory(
    SourceRecord,
    ("topic", "key", "key_schema", "value", "value_schema", "source_partition", "source_offset"),
    partition=None,
    timestamp=None,
    headers=(),
)
"""(topic, key, key_schema, value, value_schema, source_partition, source_offset) -> record
with no partition, timestamp or headers."""
