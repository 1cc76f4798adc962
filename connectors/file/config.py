"""Typed configs of the file source and sink, keyed by Kafka Connect's FileStream names.

Kafka Connect's FileStreamSource takes ``file``, ``topic`` and ``batch.size`` (default 2000);
its FileStreamSink takes ``file`` (stdout when absent) and ``topics``. Those keys keep their
meaning here so a quickstart config POSTed unchanged validates; everything else (globs,
multiline events, rotation handling, JSON output) is an extension with defaults that keep
Kafka Connect's behaviour.

Cross-field rules (``file`` or ``files`` required, one topic only) run in ``parse`` so the
REST API's 400 names the offending key instead of a bare "config". Every path must lie under
the worker's ``file.allowed.paths`` (hub/api/paths.py): checked here, and again at each open.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import Field, field_validator

from hub.api import KAFKA_CONNECT, ConfigError, ConfigModel
from hub.api.paths import PathGlob, WritePath

_GLOB_CHARS = frozenset("*?[")


def has_glob(pattern: str) -> bool:
    """True when ``pattern`` must be expanded (contains ``*``, ``?`` or ``[``)."""
    return any(ch in _GLOB_CHARS for ch in pattern)


class FileSourceConfig(ConfigModel):
    """Settings of ``file-source`` (alias FileStreamSource)."""

    upstream_keys = KAFKA_CONNECT

    file: PathGlob | None = Field(None, description="Path or glob of the file(s) to tail.")
    files: list[PathGlob] = Field(
        default_factory=list,
        description="More paths or globs: a JSON list or a comma-separated string.",
    )
    topic: str = Field(description="Topic every event is written to (one topic).")
    batch_size: int = Field(
        2000, alias="batch.size", gt=0, description="Maximum records returned by one poll."
    )
    read_from: Literal["beginning", "end"] = Field(
        "beginning",
        alias="read.from",
        description="Where to start in files with no committed offset when the task starts; "
        "files that appear while it runs are always read from their beginning.",
    )
    multiline_pattern: str | None = Field(
        None,
        alias="multiline.pattern",
        description="Regex matching the first line of an event; other lines are appended "
        "to the event before them (stack traces).",
    )
    multiline_timeout_ms: int = Field(
        1000,
        alias="multiline.timeout.ms",
        ge=0,
        description="Emit a pending multiline event after this long without a new line.",
    )
    encoding: str = Field("utf-8", description="Character encoding of the files.")
    poll_interval_ms: int = Field(
        250,
        alias="poll.interval.ms",
        ge=0,
        description="How long poll() waits when no file has new data.",
    )
    glob_rescan_interval_ms: int = Field(
        5000,
        alias="glob.rescan.interval.ms",
        ge=0,
        description="How often globs are expanded again to find new files.",
    )
    include_host_header: bool = Field(
        True, alias="include.host.header", description="Add the file.host header."
    )
    include_sequence_headers: bool = Field(
        True,
        alias="include.sequence.headers",
        description="Add file.stream and file.seq headers: numbers that stay the same when an "
        "event is re-sent after a crash, so the file sink (or any consumer) can drop re-sends.",
    )
    task_index: int = Field(0, alias="task.index", ge=0, description="Internal: task number.")
    task_count: int = Field(1, alias="task.count", gt=0, description="Internal: task count.")

    @field_validator("files", mode="before")
    @classmethod
    def _split_files(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().startswith("["):
            try:
                return json.loads(value)  # a list that went through a string-only config map
            except ValueError:
                pass
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("multiline_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value or None

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str) -> str:
        try:
            codecs.lookup(value)
        except LookupError:
            raise ValueError(f"unknown encoding {value!r}") from None
        if "a\n".encode(value, "replace") != b"a\n":
            raise ValueError("only ASCII-compatible encodings are supported (lines split on LF)")
        return value

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        errors = source_cross_field_errors(raw)
        try:
            config = super().parse(raw)
        except ConfigError as exc:
            for key, reasons in errors.items():
                exc.errors.setdefault(key, []).extend(reasons)
            raise
        if errors:
            raise ConfigError(f"invalid {cls.__name__}", errors)
        return config

    @property
    def patterns(self) -> list[str]:
        """Every configured path or glob, ``file`` first, without duplicates."""
        out = [self.file] if self.file else []
        out += [p for p in self.files if p not in out]
        return out


def source_cross_field_errors(raw: Mapping[str, Any]) -> dict[str, list[str]]:
    """Rules pydantic cannot attach to one field: a file is needed, one topic only."""
    errors: dict[str, list[str]] = {}
    files = raw.get("files")
    if not str(raw.get("file") or "").strip() and not files:
        errors["file"] = ["Missing required configuration: set 'file' (or 'files')"]
    topic = raw.get("topic")
    if isinstance(topic, str) and "," in topic:
        errors["topic"] = ["requires a single topic; got a comma-separated list"]
    return errors


class FileSinkConfig(ConfigModel):
    """Settings of ``file-sink`` (alias FileStreamSink)."""

    upstream_keys = KAFKA_CONNECT

    file: WritePath | None = Field(None, description="File to append to; stdout when absent.")
    topics: str | None = Field(None, description="Comma-separated topics to read.")
    topics_regex: str | None = Field(None, alias="topics.regex", description="Topic regex.")
    format: Literal["raw", "json"] = Field(
        "raw",
        description="raw: the value as text per line (Kafka Connect's behaviour); json: one "
        "object per record with topic, partition, offset, timestamp, key, value, headers.",
    )
    dedupe: bool = Field(
        True,
        description="Skip records a file source re-sent after a crash (by their file.stream "
        "and file.seq headers).",
    )
    buffer_bytes: int = Field(
        1 << 20, alias="buffer.bytes", gt=0, description="Write buffer size before a flush."
    )

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Self:
        config = super().parse(raw)
        if not (config.topics or config.topics_regex):
            raise ConfigError(
                f"invalid {cls.__name__}",
                {"topics": ["Missing required configuration: set 'topics' or 'topics.regex'"]},
            )
        return config
