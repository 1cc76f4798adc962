"""Debezium's comma-separated regex lists: the splitting and matching rules of its filters.

Debezium splits a list on commas not escaped by a backslash (``\\,`` is a literal comma inside
one expression; any backslash escapes the next character), trims each part, drops empty ones,
and compiles each part case-insensitively; a name is matched when one expression matches the
*whole* name (Java ``Matcher.matches``). Every filter and column rule (``table.include.list``,
``column.exclude.list``, ``column.mask.*``, ``message.key.columns``) uses these rules, so they
live in one place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def split_regexes(value: str | None) -> list[str]:
    """The expressions of a list; ValueError for a trailing lone backslash."""
    if not value:
        return []
    parts: list[str] = []
    start, i = 0, 0
    while i < len(value):
        char = value[i]
        if char == "\\":
            if i + 1 >= len(value):
                raise ValueError("unterminated escape sequence at the end of the list")
            i += 2
            continue
        if char == ",":
            parts.append(value[start:i])
            start = i + 1
        i += 1
    parts.append(value[start:])
    return [p.strip().replace("\\,", ",") for p in parts if p.strip()]


def compile_list(value: str | None) -> list[re.Pattern[str]]:
    """Compiled, case-insensitive; ValueError naming the bad expression."""
    compiled = []
    for part in split_regexes(value):
        try:
            compiled.append(re.compile(part, re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"{part!r} is not a valid regular expression: {exc}") from None
    return compiled


def matches_any(patterns: Sequence[re.Pattern[str]], name: str) -> bool:
    return any(p.fullmatch(name) for p in patterns)
