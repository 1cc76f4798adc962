"""Text-form parsers for PostgreSQL values (the output functions' formats).

Sessions run with ``DateStyle=ISO``, ``IntervalStyle=postgres``, ``TimeZone=UTC`` (set on the
connections), so each parser handles exactly one format.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

_EPOCH_DATE = dt.date(1970, 1, 1).toordinal()
_INTERVAL = re.compile(
    r"(?:([+-]?\d+) years?)?\s*(?:([+-]?\d+) mons?)?\s*(?:([+-]?\d+) days?)?\s*"
    r"(?:([+-])?(\d+):(\d+):(\d+)(?:\.(\d+))?)?$"
)
DAYS_PER_MONTH = 365.25 / 12  # Debezium's MicroDuration average month
_US_PER_DAY = 86_400_000_000


def epoch_days(text: str) -> int | None:
    """'2024-02-29' -> days since 1970-01-01; None for +-infinity and BC dates."""
    if len(text) != 10:
        return None
    return dt.date(int(text[:4]), int(text[5:7]), int(text[8:10])).toordinal() - _EPOCH_DATE


def time_micros(text: str) -> int:
    """'13:37:24.058' -> microseconds since midnight ('24:00:00' allowed)."""
    hh, mm, rest = text[:2], text[3:5], text[6:]
    sec, _, frac = rest.partition(".")
    micros = int((frac + "000000")[:6]) if frac else 0
    return ((int(hh) * 60 + int(mm)) * 60 + int(sec)) * 1_000_000 + micros


def timestamp_micros(text: str) -> int | None:
    """'2024-01-02 03:04:05.123456' -> microseconds since the epoch; None for infinity/BC."""
    days = epoch_days(text[:10])
    if days is None or len(text) < 19 or text.endswith(" BC"):
        return None
    return days * _US_PER_DAY + time_micros(text[11:])


def zoned_timestamp(text: str) -> str | None:
    """timestamptz text in UTC ('2024-01-02 03:04:05.5+00') -> '2024-01-02T03:04:05.5Z'."""
    if text in ("infinity", "-infinity") or text.endswith(" BC"):
        return None
    base = text[:-3] if text.endswith("+00") else text
    return base.replace(" ", "T", 1) + "Z"


def zoned_time(text: str) -> str:
    """timetz text ('13:37:24.5+02') -> the same instant in UTC ('11:37:24.5Z')."""
    m = re.match(r"([\d:.]+)([+-]\d\d)(?::?(\d\d))?(?::?(\d\d))?$", text)
    if not m:
        return text
    micros = time_micros(m.group(1))
    sign = -1 if m.group(2)[0] == "-" else 1
    offset = abs(int(m.group(2))) * 3600 + int(m.group(3) or 0) * 60 + int(m.group(4) or 0)
    micros = (micros - sign * offset * 1_000_000) % _US_PER_DAY
    secs, us = divmod(micros, 1_000_000)
    out = f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
    return out + (f".{us:06d}".rstrip("0") if us else "") + "Z"


def interval_micros(text: str) -> int:
    """IntervalStyle=postgres text -> microseconds (a month counts 30.4375 days, as Debezium)."""
    m = _INTERVAL.match(text.strip())
    if not m or not text.strip():
        raise ValueError(f"unparsable interval {text!r}")
    years, months, days, sign, hh, mi, ss, frac = m.groups()
    total_months = int(years or 0) * 12 + int(months or 0)
    micros = round(total_months * DAYS_PER_MONTH * _US_PER_DAY) + int(days or 0) * _US_PER_DAY
    if hh is not None:
        t = ((int(hh) * 60 + int(mi)) * 60 + int(ss)) * 1_000_000
        t += int(((frac or "") + "000000")[:6])
        micros += -t if sign == "-" else t
    return micros


def decimal_or_none(text: str) -> Decimal | None:
    """numeric text -> Decimal; NaN and infinities have no Connect Decimal form: None."""
    if text in ("NaN", "Infinity", "-Infinity"):
        return None
    return Decimal(text)


def unscaled_bytes(value: Decimal, scale: int) -> bytes:
    n = int(value.scaleb(scale))
    return n.to_bytes(max(1, (n + (n < 0)).bit_length() // 8 + 1), "big", signed=True)


def array_literal(text: str) -> list[Any]:
    """'{1,NULL,"a b"}' -> ['1', None, 'a b'] (nested braces -> nested lists)."""
    if text.startswith("["):  # explicit bounds '[0:1]={...}'
        text = text[text.index("=") + 1 :]
    value, _ = _array(text, 0)
    return value


def _array(text: str, pos: int) -> tuple[list[Any], int]:
    assert text[pos] == "{"
    pos += 1
    out: list[Any] = []
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch == "}":
            return out, pos + 1
        if ch == ",":
            pos += 1
            continue
        if ch == "{":
            sub, pos = _array(text, pos)
            out.append(sub)
        elif ch == '"':
            buf = []
            pos += 1
            while text[pos] != '"':
                if text[pos] == "\\":
                    pos += 1
                buf.append(text[pos])
                pos += 1
            out.append("".join(buf))
            pos += 1
        else:
            end = pos
            while text[end] not in ",}":
                end += 1
            item = text[pos:end]
            out.append(None if item == "NULL" else item)
            pos = end
    raise ValueError(f"unterminated array literal {text!r}")
