"""Topic routers: ``RegexRouter`` and ``TimestampRouter`` rewrite ``record.topic``."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from hub.api import ConfigModel, DataError, Transformation
from hub.api.transform import Variant
from hub.converters.logical import millis_to_timestamp
from hub.transforms._java_time import compile_pattern
from hub.transforms._util import R, java_aliases

_JAVA_GROUP = re.compile(r"\\(.)|\$(\d+)|\$\{([A-Za-z][A-Za-z0-9]*)\}|(\\)")


def java_replacement(replacement: str) -> str:
    r"""A Java ``Matcher.replaceAll`` replacement as a Python ``re`` template.

    Java writes groups as ``$1``/``${name}`` and escapes with a backslash; Python uses
    ``\g<1>``/``\g<name>`` and treats a backslash specially too, so every literal is re-escaped.
    """
    out: list[str] = []
    pos = 0
    for match in _JAVA_GROUP.finditer(replacement):
        out.append(replacement[pos : match.start()].replace("\\", "\\\\"))
        escaped, number, name, trailing = match.groups()
        if escaped is not None:
            out.append(escaped.replace("\\", "\\\\"))
        elif number is not None:
            out.append(f"\\g<{number}>")
        elif name is not None:
            out.append(f"\\g<{name}>")
        elif trailing is not None:
            raise ValueError("character to be escaped is missing")
        pos = match.end()
    out.append(replacement[pos:].replace("\\", "\\\\"))
    return "".join(out)


class RegexRouterConfig(ConfigModel):
    regex: str = Field(description="Regular expression the whole topic name must match.")
    replacement: str = Field(description="New topic name; $1, ${name} refer to groups.")

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value

    @field_validator("replacement")
    @classmethod
    def _valid_replacement(cls, value: str) -> str:
        java_replacement(value)
        return value


class RegexRouter(Transformation[R]):
    """Renames topics matching ``regex`` (whole name, like Java's ``matches``); others pass."""

    name = "RegexRouter"
    aliases = java_aliases("RegexRouter")
    config_model = RegexRouterConfig
    description = "Rename the topic with a regular expression and a replacement."

    def __init__(self, config: RegexRouterConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.pattern = re.compile(config.regex)
        self.template = java_replacement(config.replacement)

    def apply(self, record: R) -> R | None:
        match = self.pattern.fullmatch(record.topic)
        if match is None:
            return record
        try:
            return record.replace(topic=match.expand(self.template))
        except (re.error, IndexError) as exc:
            raise DataError(f"replacement for topic {record.topic!r} failed: {exc}") from None


class TimestampRouterConfig(ConfigModel):
    topic_format: str = Field(
        "${topic}-${timestamp}",
        alias="topic.format",
        description="New topic name; ${topic} and ${timestamp} are substituted.",
    )
    timestamp_format: str = Field(
        "yyyyMMdd",
        alias="timestamp.format",
        description="Java SimpleDateFormat pattern for ${timestamp} (UTC).",
    )

    @field_validator("timestamp_format")
    @classmethod
    def _valid_pattern(cls, value: str) -> str:
        compile_pattern(value)
        return value


class TimestampRouter(Transformation[R]):
    """Routes to a per-period topic (e.g. a daily index) from the record's timestamp."""

    name = "TimestampRouter"
    aliases = java_aliases("TimestampRouter")
    config_model = TimestampRouterConfig
    description = "Rename the topic from the topic name and the record timestamp."

    def __init__(self, config: TimestampRouterConfig, variant: Variant | None = None) -> None:
        super().__init__(config, variant)
        self.formatter = compile_pattern(config.timestamp_format)

    def apply(self, record: R) -> R | None:
        if record.timestamp is None:
            raise DataError(f"record in topic {record.topic!r} has no timestamp to route by")
        stamp = self.formatter.format(millis_to_timestamp(record.timestamp))
        topic = self.config.topic_format.replace("${topic}", record.topic)
        return record.replace(topic=topic.replace("${timestamp}", stamp))
