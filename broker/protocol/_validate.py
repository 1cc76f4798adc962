"""Telling a malformed request from a handler bug, after a handler raised.

kio decodes an array length of -1 as ``None`` even where the schema says the array is not
nullable, so a corrupt request can reach a handler and make it raise. Checking every request
up front would cost time on the hot path; instead, when a handler raises, the connection asks
:func:`null_in_required_field` whether the request itself was malformed, and logs one WARNING
line (bad client) instead of a traceback (our bug).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any


@cache
def _required_arrays(cls: type) -> tuple[tuple[str, bool], ...]:
    """(field name, nullable) for each array-or-entity field of a kio entity class."""
    out = []
    for f in dataclasses.fields(cls):
        origin = typing.get_origin(f.type)
        nullable = origin in (typing.Union, types.UnionType)
        if origin is tuple or nullable or dataclasses.is_dataclass(f.type):
            out.append((f.name, nullable))
    return tuple(out)


def null_in_required_field(entity: Any, path: str = "") -> str | None:
    """The dotted path of a non-nullable array that decoded as None, or None if there is none."""
    if not dataclasses.is_dataclass(entity):
        return None
    for name, nullable in _required_arrays(entity.__class__):
        value = getattr(entity, name)
        where = f"{path}.{name}" if path else name
        if value is None:
            if not nullable:
                return where
            continue
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            found = null_in_required_field(item, where)
            if found:
                return found
    return None
