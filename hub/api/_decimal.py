"""Encodings of Connect's logical types that ``hub.api.avro_data`` needs for defaults.

(``hub.converters.logical`` has the full set; the contract cannot import it.)
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from hub.api.errors import DataError
from hub.api.schema import DATE, TIME, Schema

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def decimal_to_bytes(value: Any, schema: Schema) -> bytes:
    """The unscaled value at the schema's scale, big-endian two's complement."""
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    scale = int((schema.parameters or {}).get("scale", "0"))
    try:
        unscaled = decimal.Decimal(str(value)).scaleb(scale)
    except decimal.InvalidOperation:
        raise DataError(f"not a decimal: {value!r}") from None
    if unscaled != unscaled.to_integral_value():
        raise DataError(f"{value} has more than {scale} decimal places")
    n = int(unscaled)
    return n.to_bytes(max(1, (n + (n < 0)).bit_length() // 8 + 1), "big", signed=True)


def temporal_to_int(name: str, value: Any) -> int:
    """Date -> days, Time -> ms of the day, Timestamp -> epoch ms (ints pass through)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if name == DATE and isinstance(value, dt.date):
        return (value - dt.date(1970, 1, 1)).days if not isinstance(value, dt.datetime) else (
            value.date() - dt.date(1970, 1, 1)).days  # fmt: skip
    if name == TIME and isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
            value.microsecond // 1000)  # fmt: skip
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return int((aware - _EPOCH) // dt.timedelta(milliseconds=1))
    raise DataError(f"cannot encode {value!r} as {name}")
