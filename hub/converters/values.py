"""Values as strings and back, the way Kafka Connect's ``Values`` class treats header text.

``to_string`` writes primitives plainly and containers as JSON; ``parse_string`` reads the
text back with a best-guess schema: ``null``, booleans, integers (the smallest int type that fits),
floats, JSON arrays/objects; anything else stays a string. Used by the simple header
converter and by the InsertHeader transform's ``value.literal``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import re
from typing import Any

from hub.api import SchemaAndValue
from hub.api.schema import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
)
from hub.converters import _json_data, logical

_INT_RE = re.compile(r"[-+]?\d+")
_FLOAT_RE = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")
# The narrowest integer type that holds a parsed number (``HeaderRawForm.integers`` states the
# same rule to the runtime).
_INT_SCHEMAS = [
    (INT8_SCHEMA, 2**7),
    (INT16_SCHEMA, 2**15),
    (INT32_SCHEMA, 2**31),
    (INT64_SCHEMA, 2**63),
]


def to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, int | float | decimal.Decimal):
        return str(value)
    return json.dumps(value, separators=(",", ":"), default=_json_data.schemaless_default)


def parse_string(text: str) -> SchemaAndValue:
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered == "null":
        return SchemaAndValue(None, None)
    if lowered in ("true", "false"):
        return SchemaAndValue(BOOLEAN_SCHEMA, lowered == "true")
    if _INT_RE.fullmatch(stripped):
        number = int(stripped)
        for schema, bound in _INT_SCHEMAS:
            if -bound <= number < bound:
                return SchemaAndValue(schema, number)
        return SchemaAndValue(logical.decimal_schema(0), decimal.Decimal(number))
    if _FLOAT_RE.fullmatch(stripped):
        return SchemaAndValue(FLOAT64_SCHEMA, float(stripped))
    if stripped[:1] in ("[", "{") and stripped[-1:] in ("]", "}"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            pass
        else:
            # Element types are not inferred: a schemaless container is the honest answer.
            return SchemaAndValue(None, parsed)
    return SchemaAndValue(STRING_SCHEMA, text)
