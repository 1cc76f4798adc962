"""A parser for the Prometheus text exposition format (version 0.0.4).

Format: lines separated by ``\\n``; ``# HELP name text`` and ``# TYPE name type`` comments;
other ``#`` lines are ignored; each sample is ``name{label="value",...} value [timestamp]``,
where the label set is optional, label values escape ``\\\\``, ``\\"`` and ``\\n``, the value is
a Go float (``NaN``, ``+Inf``, ``-Inf`` included) and the optional timestamp is milliseconds
since the epoch. Histogram and summary series (``_bucket``, ``_sum``, ``_count``) are ordinary
samples; their family's TYPE is reported for them.

A malformed line raises ``ValueError`` naming the line: a target that serves garbage should be
noticed, not half-read.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

_SUFFIXES = ("_bucket", "_sum", "_count", "_total", "_created")


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    value: float = 0.0
    timestamp_ms: int | None = None
    type: str = "untyped"


def parse(text: str) -> Iterator[Sample]:
    types: dict[str, str] = {}
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line[1:].split(None, 3)
            if len(parts) >= 3 and parts[0] == "TYPE":
                types[parts[1]] = parts[2]
            continue
        try:
            name, labels, rest = _split_sample(line)
            fields = rest.split()
            if not 1 <= len(fields) <= 2:
                raise ValueError("expected a value and an optional timestamp")
            value = _float(fields[0])
            timestamp = int(fields[1]) if len(fields) == 2 else None
        except ValueError as exc:
            raise ValueError(f"line {number}: {exc}: {line[:200]!r}") from None
        yield Sample(name, labels, value, timestamp, _type_of(name, types))


def _type_of(name: str, types: dict[str, str]) -> str:
    if name in types:
        return types[name]
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in types:
            return types[name[: -len(suffix)]]
    return "untyped"


def _float(text: str) -> float:
    lowered = text.lower()
    if lowered in ("+inf", "inf"):
        return math.inf
    if lowered == "-inf":
        return -math.inf
    if lowered == "nan":
        return math.nan
    return float(text)


def _split_sample(line: str) -> tuple[str, dict[str, str], str]:
    brace = line.find("{")
    space = _first_space(line)
    if brace == -1 or (space != -1 and space < brace):
        if space == -1:
            raise ValueError("missing value")
        return _name(line[:space]), {}, line[space:]
    labels, end = _labels(line, brace + 1)
    return _name(line[:brace].strip()), labels, line[end:]


def _first_space(line: str) -> int:
    positions = [p for p in (line.find(" "), line.find("\t")) if p != -1]
    return min(positions) if positions else -1


def _name(name: str) -> str:
    if not name or not (name[0].isalpha() or name[0] in "_:"):
        raise ValueError(f"bad metric name {name!r}")
    return name


def _labels(line: str, i: int) -> tuple[dict[str, str], int]:
    """Parses ``a="x",b="y"}`` from position ``i``; returns labels and the index after ``}``."""
    labels: dict[str, str] = {}
    n = len(line)
    while True:
        while i < n and line[i] in " \t,":
            i += 1
        if i < n and line[i] == "}":
            return labels, i + 1
        eq = line.find("=", i)
        if eq == -1:
            raise ValueError("unterminated label set")
        key = line[i:eq].strip()
        if not key or line[eq + 1 : eq + 2] != '"':
            raise ValueError("bad label")
        i, value = eq + 2, []
        while True:
            if i >= n:
                raise ValueError("unterminated label value")
            ch = line[i]
            if ch == "\\" and i + 1 < n:
                nxt = line[i + 1]
                value.append({"n": "\n", "\\": "\\", '"': '"'}.get(nxt, "\\" + nxt))
                i += 2
            elif ch == '"':
                i += 1
                break
            else:
                value.append(ch)
                i += 1
        labels[key] = "".join(value)
