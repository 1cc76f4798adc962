"""How a consumed record is shown: the one JSON shape the console and its API agree on.

Keys, values and header values are text when they are UTF-8 and base64 otherwise (the
``*_encoding`` says which; ``null`` for a missing key or a tombstone). ``size`` is what the
record costs in the log's payload: key, value and headers. Pages decode further (JSON, hex,
base64, registry formats) from these fields.
"""

from __future__ import annotations

import base64
from typing import Any

TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


def text(data: bytes | None) -> tuple[str | None, str]:
    """``(text, encoding)``: UTF-8 text as is, other bytes as base64, None as ``null``."""
    if data is None:
        return None, "null"
    try:
        return data.decode("utf-8"), "text"
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), "base64"


def shape(msg: Any) -> dict[str, Any]:
    """A confluent-kafka ``Message`` as the console shows it."""
    raw_key, raw_value = msg.key(), msg.value()
    key, key_enc = text(raw_key)
    value, value_enc = text(raw_value)
    ts_type, ts = msg.timestamp()
    raw_headers = msg.headers() or []
    headers = [[k, text(v)[0]] for k, v in raw_headers]
    header_bytes = sum(len(k) + len(v or b"") for k, v in raw_headers)
    return {
        "partition": msg.partition(),
        "offset": msg.offset(),
        "timestamp": ts if ts_type else None,
        "timestamp_type": TIMESTAMP_TYPES.get(ts_type),
        "key": key,
        "key_encoding": key_enc,
        "value": value,
        "value_encoding": value_enc,
        "tombstone": raw_value is None,
        "headers": headers,
        "size": len(raw_value or b"") + len(raw_key or b"") + header_bytes,
    }
