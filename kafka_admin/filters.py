"""Which browsed records a search keeps: key, value and header text, and a JSON path.

A browse hands every record it reads (as ``kafka_admin.browse`` shapes it: text or base64
strings, headers as ``[name, value]`` pairs) to ``RecordFilter.matches``; all given criteria
must hold. Text criteria are case-insensitive substrings. The JSON path is a JMESPath
expression (``customer.id``, ``amount > `100```, ``customer.id == 'cust-0042'``; a leading
``$.`` as in JSONPath is accepted) evaluated on the value parsed as JSON: the record matches
when the result is neither null, false nor empty. A value wrapped by Kafka Connect's JSON
converter (``{"schema": ..., "payload": ...}``) is also tried on its payload, so a path written
for the data matches with or without the wrapper.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError


@dataclass(frozen=True)
class RecordFilter:
    """``text`` matches key, value or any ``name=value`` header (the old "contains" box);
    ``header`` is ``name`` (the header exists) or ``name=value`` (its value contains it)."""

    text: str = ""
    key: str = ""
    value: str = ""
    header: str = ""
    json_path: str = ""

    def __post_init__(self) -> None:
        if self.json_path:
            try:
                compiled = jmespath.compile(_jmespath(self.json_path))
            except JMESPathError as exc:
                raise ValueError(f"Cannot read the JSON path {self.json_path!r}: {exc}") from None
            object.__setattr__(self, "_compiled", compiled)

    @property
    def active(self) -> bool:
        return any((self.text, self.key, self.value, self.header, self.json_path))

    def describe(self) -> str:
        """The criteria in words, for "searched N of M for ..." lines and logs."""
        parts = [
            f"{name} {value!r}"
            for name, value in (
                ("text", self.text), ("key", self.key), ("value", self.value),
                ("header", self.header), ("JSON path", self.json_path),
            )
            if value
        ]  # fmt: skip
        return ", ".join(parts)

    def matches(self, record: dict[str, Any]) -> bool:
        key = (record.get("key") or "").lower()
        value = record.get("value") or ""
        headers = [(str(k), "" if v is None else str(v)) for k, v in record.get("headers") or []]
        if self.key and self.key.strip().lower() not in key:
            return False
        if self.value and self.value.strip().lower() not in value.lower():
            return False
        if self.header and not _header_matches(headers, self.header.strip()):
            return False
        if self.text:
            needle = self.text.strip().lower()
            hay = [key, value.lower()] + [f"{k}={v}".lower() for k, v in headers]
            if not any(needle in part for part in hay):
                return False
        return not self.json_path or self._json_matches(value)

    def _json_matches(self, value: str) -> bool:
        try:
            doc = json.loads(value)
        except ValueError:
            return False
        compiled = getattr(self, "_compiled")  # noqa: B009 - set in __post_init__
        candidates = [doc]
        if isinstance(doc, dict) and set(doc) == {"schema", "payload"}:
            candidates.append(doc["payload"])
        for candidate in candidates:
            try:
                found = compiled.search(candidate)
            except JMESPathError:
                continue
            if found not in (None, False, "", [], {}):
                return True
        return False


def _jmespath(expr: str) -> str:
    text = expr.strip()
    if text.startswith("$."):
        return text[2:]
    return text[1:] if text.startswith("$") else text


def _header_matches(headers: list[tuple[str, str]], wanted: str) -> bool:
    name, sep, value = wanted.partition("=")
    name, value = name.strip().lower(), value.strip().lower()
    return any(k.lower() == name and (not sep or value in v.lower()) for k, v in headers)
