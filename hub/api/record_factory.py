"""``record_factory``: a positional, constructor-equivalent builder for records at high rates.

Why: ``SourceRecord``, ``SinkRecord`` and ``Header`` are frozen, slotted dataclasses whose
generated ``__init__`` sets each field through ``object.__setattr__``; at hundreds of thousands
of records per second that costs more than everything else a connector does per record. A
factory made here fills the slots directly (through the slots' own descriptors), taking the
fields the caller varies positionally and fixing the rest once.

The result is always equal to the constructor's (a test checks): fields neither passed nor
fixed take their dataclass default, a ``default_factory`` called per record. If a record class
ever stops being shaped so (a field without a slot, a ``__post_init__``), the factory calls
the constructor instead: a change to ``hub.api`` can cost speed, never correctness.

Thread safety: a factory holds no state; call it from any thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hub.api._slots import slot_setters

R = TypeVar("R")


def record_factory(cls: type[R], fields: Sequence[str], /, **fixed: Any) -> Callable[..., R]:
    """A function taking ``fields`` positionally and returning ``cls(**those, **fixed)``.

    ``record_factory(SourceRecord, ("topic", "value"), value_schema=STRING_SCHEMA)`` gives
    ``make(topic, value)``; ``make.many(topics, values)`` builds one record per position of
    the columns (equal lengths) in one loop, without a call per record. Raises ``TypeError``
    for a name that is not a field of ``cls``, one that is both passed and fixed, or no fields.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} is not a record dataclass")
    all_fields = dataclasses.fields(cls)
    names = [f.name for f in all_fields]
    unknown = (set(fields) | set(fixed)) - set(names)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field(s) {sorted(unknown)}")
    if set(fields) & set(fixed) or len(set(fields)) != len(fields):
        raise TypeError("a field may be passed or fixed, once")
    if not fields:
        raise TypeError("pass at least one field")
    setters = slot_setters(cls, names)
    if setters is None:
        return _by_constructor(cls, tuple(fields), fixed)  # type: ignore[no-any-return]
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    body = ["    _r = _new(_cls)"]
    for i, (field, setter) in enumerate(zip(all_fields, setters, strict=True)):
        namespace[f"_set{i}"] = setter
        if field.name in fields:
            value = field.name
        elif field.name in fixed:
            namespace[f"_fixed{i}"] = fixed[field.name]
            value = f"_fixed{i}"
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory{i}"] = field.default_factory
            value = f"_factory{i}()"
        elif field.default is not dataclasses.MISSING:
            namespace[f"_default{i}"] = field.default
            value = f"_default{i}"
        else:
            raise TypeError(f"{cls.__name__}.{field.name} has no default: pass or fix it")
        body.append(f"    _set{i}(_r, {value})")
    # Generated like dataclasses' own __init__: the field names are identifiers (they are
    # attributes), so the source holds nothing but names we made. ``many`` is the same body in
    # a loop over columns: no Python call per record.
    params = ", ".join(fields)
    columns = ", ".join(f"_col_{name}" for name in fields)
    loop = f"zip({columns}, strict=True)" if len(fields) > 1 else f"_col_{fields[0]}"
    source = (
        f"def make({params}):\n" + "\n".join(body) + "\n    return _r\n"
        f"def many({columns}):\n    _out = []\n    _append = _out.append\n"
        f"    for {params} in {loop}:\n"
        + "\n".join("    " + line for line in body)
        + "\n        _append(_r)\n    return _out\n"
    )
    exec(source, namespace)
    make: Any = namespace["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    make.many = namespace["many"]
    return make  # type: ignore[no-any-return]


def _by_constructor(cls: type[R], fields: tuple[str, ...], fixed: dict[str, Any]) -> Any:
    def make(*values: Any) -> R:
        return cls(**fixed, **dict(zip(fields, values, strict=True)))

    def many(*columns: Any) -> list[R]:
        return [make(*row) for row in zip(*columns, strict=True)]

    make.many = many  # type: ignore[attr-defined]
    return make
