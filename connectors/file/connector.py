"""The file connectors: ``file-source`` (a log-aggregation agent) and ``file-sink``.

They replace Kafka Connect's FileStreamSource/FileStreamSink: the Java class names and the
short names ``FileStreamSource``/``FileStreamSink`` are aliases, and those connectors' keys
(``file``, ``topic``, ``batch.size``; ``file``, ``topics``) mean the same here, so the Kafka
Connect quickstart configs work unchanged. See docs/connectors/file.md.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connectors.file.config import (
    FileSinkConfig,
    FileSourceConfig,
    has_glob,
    source_cross_field_errors,
)
from connectors.file.sink_task import FileSinkTask
from connectors.file.source_task import FileSourceTask
from hub.api import ExactlyOnceSupport, SinkConnector, SourceConnector

log = logging.getLogger(__name__)

_INTERNAL = ("task.index", "task.count")


class FileSourceConnector(SourceConnector):
    """Tails files and globs; ``tasks.max`` splits the files among tasks by a path hash."""

    name = "file-source"
    aliases = ("org.apache.kafka.connect.file.FileStreamSourceConnector", "FileStreamSource")
    config_model = FileSourceConfig
    description = "Tail files and globs across rotation; one record per line or event."

    def start(self, config: Any) -> None:
        self.config: FileSourceConfig = config
        log.info("[%s] file source for %s", self.name, config.patterns)

    @classmethod
    def task_class(cls) -> type[FileSourceTask]:
        return FileSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """One task per literal path at most; with globs ``max_tasks`` (files come and go)."""
        patterns = self.config.patterns
        wanted = max_tasks if any(has_glob(p) for p in patterns) else len(patterns)
        count = max(1, min(max_tasks, wanted))
        base = {k: v for k, v in self.config.raw().items() if k not in _INTERNAL}
        files = base.pop("files", None)
        if files:  # task configs may be stored as strings: keep the list in a form that survives
            base["files"] = ",".join(files)
        return [{**base, "task.index": i, "task.count": count} for i in range(count)]

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        return source_cross_field_errors(raw)

    @classmethod
    def exactly_once_support(cls, config: Mapping[str, Any]) -> ExactlyOnceSupport | None:
        """Offsets are byte positions pinned to a file's identity, so reading again from a
        committed offset yields the same events: exactly once with the worker's support on.
        Except ``read.from=end``: a file first seen without an offset starts at its end *on
        each start*, so lines written between a crash and the restart would be skipped."""
        end = str(config.get("read.from", "beginning")).strip().lower() == "end"
        return ExactlyOnceSupport.UNSUPPORTED if end else ExactlyOnceSupport.SUPPORTED


class FileSinkConnector(SinkConnector):
    """Appends records to one file (or stdout); a single task owns the file."""

    name = "file-sink"
    aliases = ("org.apache.kafka.connect.file.FileStreamSinkConnector", "FileStreamSink")
    config_model = FileSinkConfig
    description = "Append records to a file as raw lines or JSON lines; fsync on commit."

    def start(self, config: Any) -> None:
        self.config: FileSinkConfig = config
        log.info("[%s] file sink to %s", self.name, config.file or "stdout")

    @classmethod
    def task_class(cls) -> type[FileSinkTask]:
        return FileSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """Always one: two writers appending to one file would interleave partial lines."""
        return [self.config.raw()]

    @classmethod
    def exactly_once_delivery(cls, config: Mapping[str, Any]) -> ExactlyOnceSupport | None:
        """The sidecar records the flushed size and offsets: a restart cuts what followed and
        skips what the file already holds (docs/connectors/file.md)."""
        return ExactlyOnceSupport.SUPPORTED

    @classmethod
    def validate(cls, raw: Mapping[str, Any]) -> dict[str, list[str]]:
        if not (raw.get("topics") or raw.get("topics.regex")):
            return {"topics": ["Missing required configuration: set 'topics' or 'topics.regex'"]}
        return {}
