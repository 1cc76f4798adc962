"""Building kio entities across versions without one code path per version.

kio generates one frozen dataclass per API version and fields come and go between versions
(``log_start_offset`` appears in Produce v5, ``topic_id`` in Fetch v13 ...). Handlers build a
response once with every field they know and :func:`build` drops the ones the requested
version does not have, so the per-version knowledge stays in kio's schemas. Nested classes are
looked up by name in the response class's module for the same reason (or, for the old
versions kio lacks, in the table ``_legacy_schemas`` attaches to its derived classes).
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from datetime import timedelta
from functools import cache
from typing import Any

NO_THROTTLE = timedelta(0)


@cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


def has_field(cls: type, name: str) -> bool:
    """Whether this version's entity has the field (e.g. to decide what a request carries)."""
    return name in _field_names(cls)


def build(cls: Any, **values: Any) -> Any:
    """``cls(**values)`` keeping only the fields ``cls`` declares."""
    names = _field_names(cls)
    return cls(**{k: v for k, v in values.items() if k in names})


@cache
def nested(cls: type, name: str) -> Any:
    """A nested entity class (e.g. ``MetadataResponseTopic``) of the same API version."""
    derived = getattr(cls, "__legacy_nested__", None)
    if derived is not None:
        return derived[name]
    return getattr(sys.modules[cls.__module__], name)


@cache
def item_class(cls: type, field: str) -> Any:
    """The element class of a ``tuple[Nested, ...]`` field (names differ across versions)."""
    hint = typing.get_type_hints(cls)[field]
    for arg in typing.get_args(hint):
        inner = typing.get_args(arg) or (arg,)
        if isinstance(inner[0], type):
            return inner[0]
    raise TypeError(f"{cls.__name__}.{field} is not a tuple of entities")
