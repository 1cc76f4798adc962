"""Building kio entities across versions without one code path per version.

kio generates one frozen dataclass per API version and fields come and go between versions
(``log_start_offset`` appears in Produce v5, ``topic_id`` in Fetch v13 ...). Handlers build a
response once with every field they know and :func:`build` drops the ones the requested
version does not have, so the per-version knowledge stays in kio's schemas. Nested classes are
looked up by name in the response class's module for the same reason.
"""

from __future__ import annotations

import dataclasses
import sys
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
    return getattr(sys.modules[cls.__module__], name)
