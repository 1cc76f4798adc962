"""``valueJsonFields``: JSON values parsed in the reader, as ``from_json`` would parse them.

Spark's ``from_json`` is the costliest step of a JSON pipeline on a small machine: for every row
it wraps the string in a new ``InputStreamReader`` (an 8 KB buffer each) before Jackson sees it,
which costs more JVM time and garbage than reading the topic. The reader already holds each
batch's values contiguously, so Arrow's JSON parser (C++) turns them into columns for a fraction
of that, and Spark receives plain string columns.

The result must be what ``from_json(cast(value as string), "<f1> string, <f2> string, ...")``
gives (PERMISSIVE mode, Spark 4), row for row:

* a JSON object: each field's string; a number, boolean, object or array as its JSON text
  (numbers as Jackson prints them: ``1.50`` -> ``"1.5"``, ``1e3`` -> ``"1000.0"``); a missing
  field or JSON null: null. Names match case-sensitively; the last of duplicate keys wins;
  anything after the object is ignored.
* a null, empty or blank value: a null struct.
* anything else (not JSON, not an object, truncated): a struct of nulls.

Fast path: the batch's values joined by newlines go through ``pyarrow.json`` with every field
declared a string. It is taken only when that parse is unambiguous — no null value, every value
starts with ``{``, and the parse yields exactly one row per value — and Arrow rejects
everything else (a non-string field value, a duplicate key, malformed JSON), so any doubt falls
back to a per-row parse in Python for that batch, which follows the rules above.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

COLUMN = "value_json"
_DECODER = json.JSONDecoder()
_BLANK = b" \t\r\n"


def struct_type(fields: Sequence[str]) -> pa.StructType:
    return pa.struct([(f, pa.string()) for f in fields])


def spark_type(fields: Sequence[str]) -> str:
    names = ", ".join(f"`{f.replace('`', '``')}`: string" for f in fields)
    return f"struct<{names}>"


def parse(
    values: list[bytes | None] | None, column: pa.Array, fields: Sequence[str]
) -> pa.StructArray:
    """``fields`` of each value in ``column``; ``values`` is the same as Python objects.

    The native read path has no Python objects per record and passes ``values=None``: the
    Arrow parse then takes the values straight from the column's buffers, and only the rare
    per-row fallback materialises them.
    """
    type_ = struct_type(fields)
    if len(column) == 0:
        return pa.array([], type_)
    fast = _parse_arrow(values, column, fields, type_)
    if fast is not None:
        return fast
    if values is None:
        values = column.to_pylist()
    return pa.array([_parse_one(v, fields) for v in values], type_)


def _parse_arrow(
    values: list[bytes | None] | None,
    column: pa.Array,
    fields: Sequence[str],
    type_: pa.StructType,
) -> pa.StructArray | None:
    if column.null_count:
        return None
    # Every value starts with "{", so each gives at least one non-blank line: one that parses
    # (a row) or one that fails the whole parse. A value yielding two rows (a line break or a
    # second object inside it) makes the count exceed len(values); blank pieces yield none.
    # So equal counts mean row i is value i.
    if not pc.all(pc.starts_with(column, "{")).as_py():
        return None
    longest = pc.max(pc.binary_length(column)).as_py()
    try:
        table = pa_json.read_json(
            pa.BufferReader(
                b"\n".join(values)  # type: ignore[arg-type]  # no None: checked
                if values is not None
                else _joined(column)
            ),
            read_options=pa_json.ReadOptions(
                use_threads=False, block_size=max(1 << 20, 2 * longest)
            ),
            parse_options=pa_json.ParseOptions(
                explicit_schema=pa.schema(list(type_)), unexpected_field_behavior="ignore"
            ),
        )
    except pa.ArrowInvalid:
        return None
    if table.num_rows != len(column):
        return None
    return pa.StructArray.from_arrays(
        [table.column(f).combine_chunks() for f in fields], fields=list(type_)
    )


def _joined(column: pa.Array) -> bytes:
    """The column's values joined by newlines, as ``b"\\n".join(values)``, from its buffers."""
    n = len(column)
    offsets = np.frombuffer(column.buffers()[1], np.int32, count=n + 1, offset=column.offset * 4)
    raw = column.buffers()[2]
    data = np.frombuffer(raw, np.uint8) if raw is not None else np.zeros(0, np.uint8)
    body = data[offsets[0] : offsets[-1]]
    return np.insert(body, offsets[1:-1] - offsets[0], ord("\n")).tobytes()


def _parse_one(value: bytes | None, fields: Sequence[str]) -> dict[str, str | None] | None:
    if value is None or not value.strip(_BLANK):
        return None
    try:
        obj, _end = _DECODER.raw_decode(value.decode("utf-8").lstrip())
    except (ValueError, UnicodeDecodeError):
        return dict.fromkeys(fields)
    if not isinstance(obj, dict):
        return dict.fromkeys(fields)
    return {f: _text(obj.get(f)) for f in fields}


def _text(value: Any) -> str | None:
    """A JSON value as ``from_json`` renders it into a string field."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _java_double(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _java_double(x: float) -> str:
    """``Double.toString``: plain from 1e-3 to 1e7, else ``d.dddE<n>``; shortest digits."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)  # Python's repr is plain and shortest in this range, as Java's
    sign, digits, exponent = Decimal(repr(x)).normalize().as_tuple()
    assert isinstance(exponent, int)
    rest = "".join(map(str, digits[1:])) or "0"
    return f"{'-' if sign else ''}{digits[0]}.{rest}E{len(digits) - 1 + exponent}"
