"""Values that are already their own JSON form: the converters' fast path.

A change event (a Debezium envelope) is a struct of structs of ints and strings. For such a
value the generic walk of ``_json_data.encoder`` rebuilds an equal dict, field by field, and
the JSON encoder then writes it. ``checker(schema)`` compiles a predicate that says, in a few
C-level passes per struct, whether the walk would hand back the value unchanged:

* a struct value is a plain ``dict`` whose keys are exactly the schema's field names, in
  schema order (so writing it directly keeps Kafka Connect's field order);
* each field value has exactly the Python type the walk passes through: ``int`` (not
  ``bool``) within the field type's range, ``str``, ``bool``, (writing only) a ``float``
  written without an exponent, a nested struct passing the same test, or ``None`` where the
  walk would write null (optional, and no default that ``replace.null.with.default`` would
  substitute).

Anything else (other floats, bytes, logical types, maps, arrays, subclasses, missing or extra
or reordered keys, out-of-range ints) makes the predicate false and the caller takes the
generic walk, which either produces the right bytes or raises the right ``DataError``. So the
predicate may be conservative but never wrong: when it says yes, ``orjson.dumps(value)`` is
byte-for-byte what the walk plus the stdlib encoder produce (orjson writes ints, strings and
the literals exactly as ``json`` does with ``ensure_ascii=False``; floats only differ in
exponent notation, see ``checker``). Reading uses the same predicate on the parsed payload: a
value that passes is exactly what ``_json_data.decoder`` would return.

The predicate is generated Python source (as ``dataclasses`` and ``namedtuple`` do), compiled
once per schema: straight-line code unpacking ``dict.values()`` and testing each field is
about twice as fast as closures looping over field tables, and this runs for every record.
Only generated identifiers, ``repr`` of int bounds and type names go into the source; field
names stay data (a list compared against ``list(value)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from hub.api.schema import Schema, Type
from hub.converters._json_data import INT_RANGES
from hub.converters.logical import LOGICAL_NAMES

Check = Callable[[Any], bool]
_LEAF_TYPES = {Type.BOOLEAN: "bool", Type.STRING: "str"}


def checker(schema: Schema, *, replace_null: bool = True, floats: bool = False) -> Check | None:
    """A predicate for values of ``schema`` that pass through unchanged, or None when no
    value of this schema ever does (not a struct, or a transformed type somewhere inside).

    ``replace_null`` as the writer's ``replace.null.with.default``; reading always
    substitutes defaults, so readers keep the default True. ``floats`` (writers only) lets
    float fields through when their value is 0 or has a magnitude in [1e-4, 1e16): there
    both ``repr`` and orjson write the shortest round-tripping digits without an exponent,
    hence the same text (compared on ~6 million random doubles when this was written; the
    tests check the edges). Outside it, and for NaN and infinities (orjson writes null),
    the generic path writes them. Readers keep floats out: their parse is the stdlib's.
    """
    namespace: dict[str, Any] = {"fabs": math.fabs}
    source: list[str] = []
    name = _compile(schema, replace_null, floats, namespace, source)
    if name is None:
        return None
    exec(compile("\n".join(source), f"<passthrough {schema.name or 'struct'}>", "exec"), namespace)
    check: Check = namespace[name]
    return check


def _compile(
    schema: Schema, replace_null: bool, floats: bool, namespace: dict[str, Any], source: list[str]
) -> str | None:
    """Appends ``def check<n>(v)`` for a struct schema (nested structs first); its name."""
    if schema.type is not Type.STRUCT or schema.name in LOGICAL_NAMES:
        return None
    n = len(namespace) - 1  # fabs
    names = f"names{n}"
    namespace[names] = [f.name for f in schema.fields]
    body = [
        f"def check{n}(v):",
        f"    if type(v) is not dict or list(v) != {names}:",
        "        return False",
    ]
    if schema.fields:
        unpack = ", ".join(f"f{i}" for i in range(len(schema.fields)))
        body.append(f"    {unpack}, = v.values()")
    for i, f in enumerate(schema.fields):
        s, var = f.schema, f"f{i}"
        if s.name in LOGICAL_NAMES:
            return None
        if s.type in INT_RANGES:
            low, high = INT_RANGES[s.type]
            test = f"type({var}) is int and {low!r} <= {var} <= {high!r}"
        elif s.type in _LEAF_TYPES:
            test = f"type({var}) is {_LEAF_TYPES[s.type]}"
        elif s.type in (Type.FLOAT32, Type.FLOAT64) and floats:
            test = f"type({var}) is float and ({var} == 0.0 or 1e-4 <= fabs({var}) < 1e16)"
        elif s.type is Type.STRUCT:
            inner = _compile(s, replace_null, floats, namespace, source)
            if inner is None:
                return None
            test = f"type({var}) is dict and {inner}({var})"
        else:
            return None
        if s.optional and (s.default is None or not replace_null):
            test = f"{var} is None or ({test})"
        body += [f"    if not ({test}):", "        return False"]
    body.append("    return True")
    source.append("\n".join(body))
    return f"check{n}"


def walk_output_is_orjson_safe(schema: Schema) -> bool:
    """Whether orjson writes whatever the generic walk makes of a ``schema`` value exactly as
    the stdlib encoder does: true when no float type occurs anywhere in the schema (the walk
    then yields only dicts with str keys, lists, str, bool, None and range-checked ints;
    bytes and decimals are base64 text by then). Callers also exclude NUMERIC decimals
    (marker strings replaced after encoding) and fall back on any orjson error."""
    if schema.type in (Type.FLOAT32, Type.FLOAT64):
        return False
    children = [f.schema for f in schema.fields]
    children += [s for s in (schema.key, schema.value) if s is not None]
    return all(walk_output_is_orjson_safe(c) for c in children)
