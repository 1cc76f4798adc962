"""The incremental cursor: the source offset of ``http-poll`` and its boundary rule.

The cursor is the largest value of ``incremental.field`` among the records sent so far. It is
templated into the next poll's request as ``${cursor}``, so the API returns only newer data.

Boundary rule (equal cursor values). Timestamps collide: several records can share the
largest ``updated_at``, and more with that same value may appear after a poll. With
``incremental.mode=inclusive`` (the API filters ``>= cursor``), the offset also stores the
identities of the records already sent *at* the current cursor value (``seen``: their keys, or
a hash of the record when no ``key.field`` is set). Records older than the cursor, and records
at the cursor whose identity is in ``seen``, are dropped. Result: nothing is lost and nothing is
repeated, across polls and across crashes, as long as at most ``MAX_SEEN`` records share one
value (beyond that the oldest identities are forgotten and those may be sent again). With
``exclusive`` (the API filters ``> cursor``) no identities are kept; records that share the last
cursor value but appear later are never fetched, which is the API's choice.

Records are emitted in cursor order (each page is sorted stably by the cursor; the API must
return pages in ascending cursor order, as every incremental API does), so the offset of each
record (the state after it) is exactly the position to resume from.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from connectors.http._records import resolve

MAX_SEEN = 1000


def compare(a: Any, b: Any) -> int:
    """Numbers compare as numbers (also numeric strings), everything else as text."""
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        x, y = str(a), str(b)  # type: ignore[assignment]
    return (x > y) - (x < y)


def identity(record: Any, key: Any) -> str:
    if key is not None:
        return json.dumps(key, sort_keys=True, default=str)
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha1(text.encode()).hexdigest()


class Cursor:
    """Cursor value plus the identities already sent at that value."""

    def __init__(self, field: tuple[str, ...], inclusive: bool, initial: str) -> None:
        self.field = field
        self.inclusive = inclusive
        self.value: Any = initial if initial != "" else None
        self.seen: list[str] = []

    def restore(self, offset: Any) -> None:
        if offset:
            self.value = offset.get("cursor", self.value)
            self.seen = list(offset.get("seen", []))

    @property
    def template_value(self) -> str:
        return "" if self.value is None else str(self.value)

    def admit(self, records: list[tuple[Any, Any]]) -> list[tuple[Any, Any, dict[str, Any]]]:
        """(record, key) pairs -> (record, key, offset) for records not sent before, in order.

        Records without the cursor field cannot be placed and are passed with the unchanged
        offset (they are not deduplicated).
        """
        keyed = [(resolve(r, self.field), r, k) for r, k in records]
        keyed.sort(key=_SortKey.of)
        out = []
        for value, record, key in keyed:
            if value is None:
                out.append((record, key, self.offset()))
                continue
            order = -1 if self.value is None else compare(value, self.value)
            if order < 0 and self.value is not None:
                continue  # older than the committed cursor: the API ignored the filter
            ident = identity(record, key) if self.inclusive else ""
            if order == 0:
                if not self.inclusive or ident in self.seen:
                    continue
                self.seen.append(ident)
                del self.seen[:-MAX_SEEN]
            else:
                self.value, self.seen = value, ([ident] if self.inclusive else [])
            out.append((record, key, self.offset()))
        return out

    def offset(self) -> dict[str, Any]:
        if self.value is None:
            return {}
        if self.inclusive:
            return {"cursor": self.value, "seen": list(self.seen)}
        return {"cursor": self.value}


class _SortKey:
    """Sort key consistent with ``compare``; records without a value keep their place first."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    @classmethod
    def of(cls, item: tuple[Any, Any, Any]) -> _SortKey:
        return cls(item[0])

    def __lt__(self, other: _SortKey) -> bool:
        if self.v is None or other.v is None:
            return self.v is None and other.v is not None
        return compare(self.v, other.v) < 0
