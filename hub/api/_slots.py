"""Building many records fast: the slot setters of a frozen, slotted dataclass (private:
connectors use ``hub.api.record_factory``, which is built on this).

The records (``SourceRecord``, ``SinkRecord``, ``Header``) are frozen, slotted dataclasses. Their
generated ``__init__`` sets every field through ``object.__setattr__``, which costs more than
everything else a high-rate connector does per record. The slots' member descriptors set a
field directly. ``slot_setters`` hands them out in the order the caller asks for, but only while
the class is shaped exactly as the caller expects; otherwise it returns None and the caller
builds records with the constructor. A change to the record classes then costs speed, never
correctness. A record built this way is indistinguishable from (and equal to) a constructed one
as long as every field is set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

Setter = Callable[[Any, Any], None]


def slot_setters(cls: type, names: Sequence[str]) -> tuple[Setter, ...] | None:
    """The ``__set__`` of each of ``names``' slots, in that order; None unless ``cls`` is a
    dataclass whose fields are exactly ``names``, each a slot, with no ``__post_init__``."""
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return None
    if {f.name for f in dataclasses.fields(cls)} != set(names) or len(set(names)) != len(names):
        return None
    setters = []
    for name in names:
        descriptor = next((vars(k)[name] for k in cls.__mro__ if name in vars(k)), None)
        setter = getattr(descriptor, "__set__", None)
        if setter is None:
            return None
        setters.append(setter)
    return tuple(setters)
