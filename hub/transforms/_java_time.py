"""Java ``SimpleDateFormat`` patterns (what Kafka Connect configs contain) in Python.

Kafka Connect users already have patterns like ``yyyy-MM-dd'T'HH:mm:ss.SSSZ`` in their
TimestampConverter and TimestampRouter configs; this turns one into a formatter and a parser
over UTC datetimes (Connect timestamps carry no zone, and Kafka Connect formats them in UTC).
Supported letters: y M d H h m s S a E D z Z X and quoted literals; others are a config error.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from functools import lru_cache

_RUN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|[^A-Za-z']+")


def _two(n: int) -> str:
    return f"{n:02d}"


def _field(letter: str, width: int) -> tuple[Callable[[dt.datetime], str], str]:
    """(formatter, strptime directive) for one run of a pattern letter."""
    pad = (lambda n: str(n).zfill(width)) if width > 1 else str
    if letter == "y":
        if width == 2:
            return (lambda t: _two(t.year % 100)), "%y"
        return (lambda t: str(t.year).zfill(width)), "%Y"
    if letter == "M":
        if width >= 4:
            return (lambda t: t.strftime("%B")), "%B"
        if width == 3:
            return (lambda t: t.strftime("%b")), "%b"
        return (lambda t: pad(t.month)), "%m"
    if letter == "E":
        return (
            ((lambda t: t.strftime("%A")), "%A")
            if width >= 4
            else ((lambda t: t.strftime("%a")), "%a")
        )
    simple: dict[str, tuple[Callable[[dt.datetime], int], str]] = {
        "d": (lambda t: t.day, "%d"),
        "H": (lambda t: t.hour, "%H"),
        "h": (lambda t: (t.hour % 12) or 12, "%I"),
        "m": (lambda t: t.minute, "%M"),
        "s": (lambda t: t.second, "%S"),
        "D": (lambda t: t.timetuple().tm_yday, "%j"),
    }
    if letter in simple:
        get, directive = simple[letter]
        return (lambda t: pad(get(t))), directive
    if letter == "S":
        return (lambda t: str(t.microsecond // 1000).zfill(3)[:width].ljust(width, "0")), "%f"
    if letter == "a":
        return (lambda t: "AM" if t.hour < 12 else "PM"), "%p"
    if letter == "z":
        return (lambda t: "UTC"), "%Z"
    if letter == "Z":
        return (lambda t: "+0000"), "%z"
    if letter == "X":
        return (lambda t: "Z"), "%z"
    raise ValueError(f"unsupported date pattern letter {letter!r}")


def _constant(text: str) -> Callable[[dt.datetime], str]:
    return lambda _t: text


class JavaDateFormat:
    """One compiled pattern: ``format(datetime) -> str`` and ``parse(str) -> datetime`` (UTC)."""

    def __init__(self, pattern: str) -> None:
        if not pattern:
            raise ValueError("empty date pattern")
        self.pattern = pattern
        parts: list[Callable[[dt.datetime], str]] = []
        directives: list[str] = []
        for match in _RUN.finditer(pattern):
            text = match.group(0)
            if match.group(1):
                fmt, directive = _field(match.group(1), len(text))
                parts.append(fmt)
                directives.append(directive)
            else:
                literal = text[1:-1].replace("''", "'") if text.startswith("'") else text
                literal = literal or "'"
                parts.append(_constant(literal))
                directives.append(literal.replace("%", "%%"))
        self._parts = parts
        self._strptime = "".join(directives)

    def format(self, value: dt.datetime) -> str:
        value = value.astimezone(dt.UTC) if value.tzinfo else value
        return "".join(part(value) for part in self._parts)

    def parse(self, text: str) -> dt.datetime:
        """Raises ValueError if ``text`` does not match the pattern."""
        parsed = dt.datetime.strptime(text, self._strptime)
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=dt.UTC)
        return parsed.astimezone(dt.UTC)


@lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> JavaDateFormat:
    return JavaDateFormat(pattern)
