"""Per-column rules: which columns an event carries, how values are masked, what the key is.

Debezium's semantics, from its ``TableSchemaBuilder``, ``ColumnMappers``, ``MaskStrings``,
``TruncateColumn`` and ``Key.CustomKeyMapper``:

* Names are fully qualified ``<schema>.<table>.<column>``, matched by the regex lists of
  ``_regex_list`` (whole name, case-insensitive).
* ``column.include.list`` / ``column.exclude.list`` (mutually exclusive) choose the columns of
  ``before``/``after`` and of the value schema, in the snapshot and the stream alike. The key
  always keeps its columns: an excluded key column is still in the key.
* Value rules, the first matching one per column wins, tried in this order: every
  ``column.truncate.to.<n>.chars``, then ``column.mask.with.<n>.chars``, then
  ``column.mask.hash.<alg>.with.salt.<salt>`` (v1), then ``column.mask.hash.v2...`` (within a
  kind, in the order the keys appear in the config). They apply to ``before`` and ``after``,
  never to the key.

  - truncate: string and bytes values longer than n are cut to n; the field schema gets
    parameter ``truncateLength=n`` when the column's declared length is unknown or above n
    (``varchar(n)``/``char(n)`` declare n; other types count as unbounded);
  - mask: character columns (``text``, ``varchar``, ``char``, ``"char"``, ``name``) become n
    asterisks, whatever the value, null included; the field schema gets ``masked=true`` (on
    any matched column, as Debezium does);
  - hash: character columns become the salted hex digest (``_hashing``), cut to the declared
    length when there is one; null stays null; schema parameter ``masked=true``.
* ``message.key.columns`` (``<table regex>:<col>,<col>;...``): the key is made of the columns
  matching ``<table regex>.<col>``, rule by rule in config order, each rule's columns in table
  order; a table no rule matches keeps its primary key.

A ``TableColumns`` is built once per table version (with the ``TableSchema``), so the per-row
cost is a dict comprehension over the kept columns plus one call per mapped value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from connectors.postgres_cdc import _hashing
from connectors.postgres_cdc._regex_list import compile_list, matches_any

_TEXT, _NAME, _CHAR, _BPCHAR, _VARCHAR = 25, 19, 18, 1042, 1043
_CHARACTER_TYPES = frozenset({_TEXT, _NAME, _CHAR, _BPCHAR, _VARCHAR})
_TRUNCATE = re.compile(r"column\.truncate\.to\.(\d+)\.chars")
_MASK = re.compile(r"column\.mask\.with\.(\d+)\.chars")
_HASH = re.compile(r"column\.mask\.hash\.(?P<v2>v2\.)?(?P<alg>[^.]+)\.with\.salt\.(?P<salt>.+)")
_KEY_RULE = re.compile(r"^\s*([^:]+):([^:,]+(,[^:,]+)*)\s*$")
Convert = Callable[[Any], Any]


def declared_length(type_oid: int, typmod: int) -> int:
    """The column's length as the JDBC driver reports it, -1 when unbounded or unknown."""
    if type_oid in (_VARCHAR, _BPCHAR):
        return typmod - 4 if typmod >= 4 else -1
    if type_oid == _CHAR:
        return 1
    if type_oid == _NAME:
        return 63
    return -1


@dataclass(frozen=True)
class ValueRule:
    """One ``column.truncate``/``column.mask`` key: what it does to a matched column."""

    kind: str  # "truncate", "mask" or "hash"
    length: int = 0
    algorithm: str = ""
    salt: bytes = b""
    v2: bool = False

    def parameters(self, type_oid: int, typmod: int) -> dict[str, str]:
        if self.kind != "truncate":
            return {"masked": "true"}
        length = declared_length(type_oid, typmod)
        return {"truncateLength": str(self.length)} if length < 0 or length > self.length else {}

    def converter(self, type_oid: int, typmod: int) -> Convert | None:
        """value -> masked value for this column; None when the rule leaves it unchanged."""
        length = declared_length(type_oid, typmod)
        if self.kind == "truncate":
            if 0 <= length <= self.length:
                return None
            cut = self.length
            return lambda v: v[:cut] if isinstance(v, str | bytes) and len(v) > cut else v
        if type_oid not in _CHARACTER_TYPES:
            return None
        if self.kind == "mask":
            mask = "*" * self.length
            return lambda _: mask
        algorithm, salt, v2 = self.algorithm, self.salt, self.v2

        def hashed(value: Any) -> Any:
            if value is None:
                return None
            digest = _hashing.salted_hex(algorithm, salt, str(value), v2)
            return digest[:length] if length > 0 else digest

        return hashed


@dataclass(frozen=True)
class TableColumns:
    """The rules resolved for one table version."""

    value_names: tuple[str, ...]
    parameters: Mapping[str, dict[str, str]] = field(default_factory=dict)
    converters: Mapping[str, Convert] = field(default_factory=dict)
    key_names: tuple[str, ...] | None = None

    @property
    def projects(self) -> bool:
        """Whether rows need rewriting for the value (columns dropped or values mapped)."""
        return bool(self.converters) or self._drops

    def project(self, row: dict[str, Any] | None) -> dict[str, Any] | None:
        if row is None:
            return None
        convert = self.converters
        return {
            name: convert[name](row.get(name)) if name in convert else row.get(name)
            for name in self.value_names
        }

    _drops: bool = False


class ColumnRules:
    """The column-level settings of one connector, parsed once; ``for_table`` per table."""

    def __init__(
        self,
        include: str | None = None,
        exclude: str | None = None,
        key_columns: str | None = None,
        value_rules: Sequence[tuple[str, ValueRule]] = (),
    ) -> None:
        self._include = compile_list(include) if include else None
        self._exclude = compile_list(exclude) if exclude else None
        self._rules = [(compile_list(columns), rule) for columns, rule in value_rules]
        self._keys = key_rule_patterns(key_columns)

    @property
    def active(self) -> bool:
        return bool(self._include is not None or self._exclude or self._rules or self._keys)

    def for_table(
        self, namespace: str, table: str, columns: Sequence[tuple[str, int, int]]
    ) -> TableColumns | None:
        """Rules for (name, type oid, typmod) columns; None when none applies to the table."""
        if not self.active:
            return None
        prefix = f"{namespace}.{table}."
        kept = tuple(name for name, _, _ in columns if self._keeps(prefix + name))
        parameters: dict[str, dict[str, str]] = {}
        converters: dict[str, Convert] = {}
        for name, oid, typmod in columns:
            if name not in kept:
                continue
            rule = next((r for pats, r in self._rules if matches_any(pats, prefix + name)), None)
            if rule is None:
                continue
            params = rule.parameters(oid, typmod)
            if params:
                parameters[name] = params
            convert = rule.converter(oid, typmod)
            if convert is not None:
                converters[name] = convert
        key_names: list[str] = []
        for pattern in self._keys:
            key_names += [n for n, _, _ in columns
                          if pattern.fullmatch(prefix + n) and n not in key_names]  # fmt: skip
        return TableColumns(
            kept, parameters, converters, tuple(key_names) or None,
            _drops=len(kept) != len(columns),
        )  # fmt: skip

    def _keeps(self, name: str) -> bool:
        if self._include is not None:
            return matches_any(self._include, name)
        return not (self._exclude and matches_any(self._exclude, name))


def key_rule_patterns(value: str | None) -> list[re.Pattern[str]]:
    """``message.key.columns`` -> one ``<table regex>.<column>`` pattern per named column."""
    patterns: list[re.Pattern[str]] = []
    for part in (value or "").split(";"):
        if not part.strip():
            continue
        table, _, cols = part.partition(":")
        for col in cols.split(","):
            patterns += compile_list(f"{table.strip()}.{col.strip()}")
    return patterns


def key_columns_errors(value: str) -> list[str]:
    """Debezium's check of ``message.key.columns``: each ``;`` part is ``table:col[,col]``."""
    if not value.strip():
        return ["must not be empty"]
    for part in value.split(";"):
        if not _KEY_RULE.match(part):
            return [
                f"{part!r}: message key columns must be of the form "
                "<fully-qualified table name>:<column>[,<column>...][;...]"
            ]
        try:
            key_rule_patterns(part)
        except ValueError as exc:
            return [str(exc)]
    return []


def value_rules(raw: Mapping[str, Any]) -> tuple[list[tuple[str, ValueRule]], dict[str, str]]:
    """(columns, rule) from the ``column.truncate``/``column.mask`` keys of ``raw``, in
    Debezium's precedence; and key -> problem for keys that are malformed."""
    truncates: list[tuple[str, ValueRule]] = []
    masks: list[tuple[str, ValueRule]] = []
    hashes: list[tuple[str, ValueRule]] = []
    hashes_v2: list[tuple[str, ValueRule]] = []
    problems: dict[str, str] = {}
    for key, value in raw.items():
        columns = str(value)
        if m := _TRUNCATE.fullmatch(key):
            truncates.append((columns, ValueRule("truncate", int(m.group(1)))))
        elif m := _MASK.fullmatch(key):
            masks.append((columns, ValueRule("mask", int(m.group(1)))))
        elif m := _HASH.fullmatch(key):
            try:
                algorithm = _hashing.hashlib_name(m.group("alg"))
            except ValueError as exc:
                problems[key] = str(exc)
                continue
            rule = ValueRule("hash", 0, algorithm, m.group("salt").encode(), bool(m.group("v2")))
            (hashes_v2 if rule.v2 else hashes).append((columns, rule))
        else:
            continue
        try:
            compile_list(columns)
        except ValueError as exc:
            problems[key] = str(exc)
    return truncates + masks + hashes + hashes_v2, problems
