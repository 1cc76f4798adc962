"""Which topics, consumer groups and topic config properties are mirrored.

MirrorMaker 2's default filters: an include list and an exclude list, each a comma-separated
list of names and regular expressions joined with ``|`` into one pattern that must match the
whole name (Java's ``Pattern.matches``). Excludes win. An empty list matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TOPICS_DEFAULT = ".*"
TOPICS_EXCLUDE_DEFAULT = r".*[\-\.]internal, .*\.replica, __.*"
GROUPS_DEFAULT = ".*"
GROUPS_EXCLUDE_DEFAULT = "console-consumer-.*, connect-.*, __.*"
CONFIG_PROPERTIES_EXCLUDE_DEFAULT = (
    r"follower\.replication\.throttled\.replicas, "
    r"leader\.replication\.throttled\.replicas, "
    r"message\.timestamp\.difference\.max\.ms, "
    r"message\.timestamp\.type, "
    r"unclean\.leader\.election\.enable, "
    r"min\.insync\.replicas"
)


def split_list(value: str | Iterable[str]) -> list[str]:
    """A Kafka LIST config: comma-separated, whitespace around items ignored, no empties."""
    items = value.split(",") if isinstance(value, str) else list(value)
    return [item.strip() for item in items if item.strip()]


def compile_pattern_list(value: str | Iterable[str]) -> re.Pattern[str] | None:
    """One pattern for the whole list (None for an empty list: it matches nothing).

    Raises ``re.error`` for an invalid expression (config validation reports it by key)."""
    items = split_list(value)
    return re.compile("|".join(items)) if items else None


def _matches(pattern: re.Pattern[str] | None, name: str) -> bool:
    return pattern is not None and pattern.fullmatch(name) is not None


class IncludeExcludeFilter:
    """``include`` and not ``exclude``: MM2's DefaultTopicFilter and DefaultGroupFilter."""

    def __init__(self, include: str, exclude: str) -> None:
        self.include = compile_pattern_list(include)
        self.exclude = compile_pattern_list(exclude)

    def __call__(self, name: str) -> bool:
        return _matches(self.include, name) and not _matches(self.exclude, name)


class ConfigPropertyFilter:
    """MM2's DefaultConfigPropertyFilter: ``config.properties.exclude`` and
    ``use.defaults.from`` (whether a property at its default on the source is set on the
    target with the source's default, or reset to the target's own default)."""

    def __init__(self, exclude: str, use_defaults_from: str = "target") -> None:
        self.exclude = compile_pattern_list(exclude)
        self.use_defaults_from = use_defaults_from

    def should_replicate(self, name: str) -> bool:
        return not _matches(self.exclude, name)

    def should_replicate_source_default(self, name: str) -> bool:
        return self.use_defaults_from == "source"
